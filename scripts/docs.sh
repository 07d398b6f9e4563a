#!/usr/bin/env bash
# Builds the API documentation with the toolchain's own tools, no plugin: the symbol graph of
# each documented module (swift-symbolgraph-extract), then `docc convert` of its catalog with
# warnings as errors; and fails if any public symbol has no documentation comment.
#
#   scripts/docs.sh            # into .build/docs: one .doccarchive per module
#   scripts/docs.sh DIR        # elsewhere
#
# Preview one with: docc preview Sources/Valet/Valet.docc --additional-symbol-graph-dir .build/docs/symbol-graphs/Valet
set -euo pipefail
cd "$(dirname "$0")/.."

out=${1:-.build/docs}
modules=(KeychainCore Valet Locksmith UICKeyChainStore)
toolchain=$(dirname "$(command -v swift)")

swift build >/dev/null
bin=$(swift build --show-bin-path)
triple=$(swift -print-target-info | grep -m1 '"triple"' | sed -E 's/.*"triple": *"([^"]+)".*/\1/')
rm -rf "$out"
mkdir -p "$out/symbol-graphs"

includes=(-I "$bin/Modules" -I "$bin")
for c in Sources/C*; do
    [ -d "$c/include" ] && includes+=(-I "$c/include") || includes+=(-I "$c")
done

for module in "${modules[@]}"; do
    graphs="$out/symbol-graphs/$module"
    mkdir -p "$graphs"
    "$toolchain/swift-symbolgraph-extract" -module-name "$module" -target "$triple" "${includes[@]}" \
        -minimum-access-level public -skip-synthesized-members -output-dir "$graphs"
    "$toolchain/docc" convert "Sources/$module/$module.docc" \
        --additional-symbol-graph-dir "$graphs" \
        --fallback-display-name "$module" --fallback-bundle-identifier "swift-keychain-linux.$module" \
        --output-path "$out/$module.doccarchive" --warnings-as-errors >/dev/null
    echo "$module: $out/$module.doccarchive"
done

# Every public symbol declared in these modules carries a documentation comment.
python3 - "$out/symbol-graphs" <<'PY'
import json, pathlib, sys
missing = []
for path in sorted(pathlib.Path(sys.argv[1]).rglob("*.symbols.json")):
    graph = json.loads(path.read_text())
    module = graph["module"]["name"]
    for symbol in graph["symbols"]:
        if symbol.get("accessLevel") not in ("public", "open") or "location" not in symbol:
            continue
        if not symbol.get("docComment", {}).get("lines"):
            where = symbol["location"]["uri"].split("/Sources/")[-1]
            missing.append(f"{module}: {'.'.join(symbol['pathComponents'])} ({where}:{symbol['location']['position']['line'] + 1})")
if missing:
    print(f"{len(missing)} public symbols without a documentation comment:")
    print("\n".join(sorted(set(missing))))
    sys.exit(1)
print("every public symbol is documented")
PY
