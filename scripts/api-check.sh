#!/usr/bin/env bash
# Checks that the public API of the library products (KeychainCore, Valet, Locksmith,
# UICKeyChainStore, Security, LocalAuthentication) breaks nothing of the last release's:
# SwiftPM's API-breakage diagnosis (swift-api-digester) against the baseline commit, which
# .ci/api-baseline names (or, while it names none, the commit that added that file).
#
# Two corrections to the diagnosis. It reports changes to `package` and SPI declarations,
# which are no library user's API (open upstream: swiftlang/swift#81003 and #79990,
# swift-package-manager#10010 and #8352): those reports are dropped. And it does not report a
# public declaration made `package` or internal (it matches declarations whatever their
# access): every public declaration of the baseline is looked for among the public symbols of
# this build (swift-symbolgraph-extract, as scripts/docs.sh does).
#
# ValetNaming, whose types Valet's API names through typealiases, is in no product and is not
# compared (SwiftPM compares product modules only): a change to it is found by review.
#
# The baseline is built in a checkout under .build, and its API kept in .build/api-baseline (a
# second run against the same baseline takes seconds).
#
#   scripts/api-check.sh                # against the baseline
#   scripts/api-check.sh COMMIT         # against another commit
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(git rev-parse --is-shallow-repository)" = true ]; then
    echo "api-check: a shallow clone cannot find the baseline; clone with full history (git fetch --unshallow)"
    exit 1
fi
baseline=${1:-$(grep -v '^#' .ci/api-baseline | tr -d '[:space:]')}
if [ -z "$baseline" ]; then
    baseline=$(git log --diff-filter=A --format=%H -1 -- .ci/api-baseline)
    [ -n "$baseline" ] || { echo "api-check: .ci/api-baseline names no commit and is not committed yet"; exit 1; }
fi
if ! git cat-file -e "$baseline^{commit}" 2>/dev/null || ! git merge-base --is-ancestor "$baseline" HEAD; then
    echo "api-check: the baseline $baseline is not a commit this one descends from; fix .ci/api-baseline"
    exit 1
fi
baseline=$(git rev-parse "$baseline")
echo "api-check: the public API against $(git log -1 --format='%h (%cs) %s' "$baseline" | cut -c1-100)"

dumps="$PWD/.build/api-baseline/$baseline"  # where SwiftPM keeps the dumps of --baseline-dir
log=$(mktemp)
graphs=$(mktemp -d)
trap 'rm -rf "$log" "$graphs"' EXIT
# The diagnosis exits non-zero for any report, the dropped ones included: its verdict is the filter's.
swift package diagnose-api-breaking-changes "$baseline" --baseline-dir "$PWD/.build/api-baseline" >"$log" 2>&1 || true
if ! grep -qE "breaking changes? detected in|No breaking changes detected in" "$log"; then
    cat "$log"
    echo "api-check: the diagnosis did not run"
    exit 1
fi

# This build's public symbols, per module the baseline has.
toolchain=$(dirname "$(command -v swift)")
bin=$(swift build --show-bin-path)
triple=$(swift -print-target-info | grep -m1 '"triple"' | sed -E 's/.*"triple": *"([^"]+)".*/\1/')
includes=(-I "$bin/Modules" -I "$bin")
for c in Sources/C*; do
    [ -d "$c/include" ] && includes+=(-I "$c/include") || includes+=(-I "$c")
done
for dump in "$dumps"/*.json; do
    module=$(basename "$dump" .json)
    mkdir -p "$graphs/$module"
    "$toolchain/swift-symbolgraph-extract" -module-name "$module" -target "$triple" "${includes[@]}" \
        -minimum-access-level public -output-dir "$graphs/$module"
done

python3 - "$dumps" "$graphs" "$log" <<'PY'
import json, pathlib, re, sys

dumps, graphs, log = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
declarations = {"TypeDecl", "Function", "Var", "Constructor", "TypeAlias", "Subscript", "EnumElement", "AssociatedType"}

def hidden(node):
    return node.get("isInternal", False) or bool(node.get("spi_group_names"))

# Per module: each declaration by its path of printed names, whether it (or what holds it) is
# package or SPI, and the public declarations of the baseline.
paths, public = {}, {}
for dump in sorted(dumps.glob("*.json")):
    module = dump.stem
    paths[module], public[module] = {}, {}
    def walk(node, path, concealed):
        for child in node.get("children", []):
            if child.get("kind") not in declarations:
                continue
            here = path + (child["printedName"],)
            inner = concealed or hidden(child)
            paths[module][here] = inner
            # Types of other modules appear as the holders of this module's extensions of them;
            # a name with a leading underscore is no user's API (symbol graphs leave it out).
            if not inner and not child.get("implicit") and "usr" in child and child.get("moduleName") == module and not any(name.startswith("_") for name in here):
                public[module][child["usr"]] = child.get("declKind", child["kind"]).lower() + " " + ".".join(here)
            walk(child, here, inner)
    walk(json.loads(dump.read_text())["ABIRoot"], (), False)

def components(name):
    parts, depth, current = [], 0, ""
    for character in name:
        depth += character == "("
        depth -= character == ")"
        if character == "." and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += character
    return tuple(parts + [current])

breaks, dropped = [], 0
module = None
for line in log.read_text().splitlines():
    header = re.search(r"breaking changes? detected in (\S+?):?$", line)
    if header:
        module = header.group(1)
        continue
    report = re.search(r"API breakage: (\S+) (\S+)", line)
    if not report or module is None:
        continue
    if paths.get(module, {}).get(components(report.group(2)), False):
        dropped += 1
    else:
        breaks.append(f"{module}: {line.split('API breakage: ', 1)[1]}")

for module, declared in sorted(public.items()):
    current = set()
    for graph in (graphs / module).glob("*.symbols.json"):
        current |= {symbol["identifier"]["precise"] for symbol in json.loads(graph.read_text())["symbols"]}
    for usr, what in sorted(declared.items(), key=lambda item: item[1]):
        if usr not in current:
            breaks.append(f"{module}: {what} is no longer public (removed, changed, or made package or internal)")

if dropped:
    print(f"api-check: {dropped} reports about package or SPI declarations dropped (not a library user's API)")
if breaks:
    print(f"api-check: {len(breaks)} breaking changes to the public API:")
    print("\n".join(sorted(set(breaks))))
    print("api-check: keep the API, or, for a release that breaks it on purpose, move .ci/api-baseline at that release")
    sys.exit(1)
print(f"api-check: no breaking change to the public API of {', '.join(sorted(public))}")
PY
