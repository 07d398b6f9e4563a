#!/usr/bin/env bash
# Builds the `keychain` command as a self-contained binary and prints its path: release, the
# Swift runtime and Foundation linked in, and the C++ runtime too when its static archive is
# installed (libstdc++-dev, which the Swift toolchain itself needs), so the binary runs on a
# machine without a Swift toolchain, needing only glibc, libsqlite3 and libcrypto.
#
#   scripts/build-static.sh                      # into .build
#   scripts/build-static.sh --scratch-path DIR   # into DIR (the benchmark builds its own)
#
# Why the C++ runtime: the Swift runtime needs libstdc++ and libgcc_s, and loading and
# relocating those two shared libraries is about a millisecond of every `keychain get`, a third
# of what the command costs above reading the vault.
set -euo pipefail
cd "$(dirname "$0")/.."

scratch=.build
while [ $# -gt 0 ]; do
    case "$1" in
        --scratch-path) scratch=${2:?--scratch-path needs a directory}; shift 2 ;;
        --scratch-path=*) scratch=${1#--scratch-path=}; shift ;;
        -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "build-static.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done

# Generic types are instantiated through metadata accessors rather than from mangled names: a
# mangled `Dictionary<Key, Value>` makes the runtime look `Key: Hashable` up by scanning every
# conformance record in the binary, a million instructions over the first dictionaries a
# command makes (a long-lived program pays that once; a command pays it on every run).
#
# No `$ORIGIN` run path (`--disable-local-rpath`): the binary finds libcrypto and libsqlite3 where
# the system keeps them, never in the directory it was copied to, and the loader does not try
# 26 paths there first on every run.
build=(swift build -c release --static-swift-stdlib --disable-local-rpath --product keychain --scratch-path "$scratch"
    -Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors)

# Linked by the toolchain's own lld rather than the system linker: its layout of the same
# objects runs ~0.17 ms faster here (with the page cache dropped first, 1.64x the benchmark's
# process floor became 1.59x in two interleaved runs; copies of one binary written at different
# times differ by as much, so that is how to compare two). Where glibc understands the packed
# form (2.36 and later), lld also packs the 37,000 relative relocations of a position-
# independent Swift binary into 7 KB (DT_RELR) instead of 870 KB of entries read one by one:
# 0.15 M instructions fewer.
# The toolchain's own directory, from the driver itself (a `swiftc` on PATH may be a shim).
resources=$(swift -print-target-info 2>/dev/null | sed -n 's/.*"runtimeResourcePath": "\(.*\)".*/\1/p')
if [ -n "$resources" ] && [ -x "$(dirname "$(dirname "$resources")")/bin/ld.lld" ]; then
    build+=(-Xswiftc -use-ld=lld)
    glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
    if [ -n "$glibc" ] && [ "$(printf '%s\n2.36\n' "$glibc" | sort -V | head -1)" = 2.36 ]; then
        build+=(-Xlinker -z -Xlinker pack-relative-relocs)
    fi
fi

# The Swift driver asks for `-lstdc++` itself, and the linker takes the first match along its
# search path: a directory holding only the archive, searched first, makes that match static.
compiler=$(command -v cc || command -v clang || true)
archive=$([ -n "$compiler" ] && "$compiler" -print-file-name=libstdc++.a || true)
if [ -n "$archive" ] && [ -f "$archive" ]; then
    runtime="$scratch/static-c++-runtime"
    mkdir -p "$runtime"
    ln -sfn "$archive" "$runtime/libstdc++.a"
    build+=(-Xswiftc -L"$(cd "$runtime" && pwd)" -Xswiftc -Xclang-linker -Xswiftc -static-libgcc)
fi

"${build[@]}" >&2
echo "$("${build[@]}" --show-bin-path)/keychain"
