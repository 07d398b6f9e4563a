#!/usr/bin/env bash
# Builds the `keychain` command as a self-contained binary (scripts/build-static.sh: the Swift
# runtime, Foundation and the C++ runtime linked in, so it runs on a machine without a Swift
# toolchain, needing only glibc, libsqlite3 and libcrypto) and installs it under a prefix with
# its manual page and its bash, zsh and fish completions.
#
#   scripts/install.sh                 # into ~/.local (root: /usr/local)
#   scripts/install.sh --prefix DIR    # anywhere; DESTDIR is honoured for packaging
#
# The login's PAM module, which opens the vault with the login password, is installed apart, as
# root: scripts/install-pam.sh (docs/login.md).
set -euo pipefail
cd "$(dirname "$0")/.."

prefix=$([ "$(id -u)" -eq 0 ] && echo /usr/local || echo "$HOME/.local")
. scripts/install-arguments.sh
read_install_arguments "$0" "$@"
case "$prefix" in /*) ;; *) prefix="$PWD/$prefix" ;; esac
root="${DESTDIR:-}$prefix"

binary=$(scripts/build-static.sh)

install -d "$root/bin" "$root/share/man/man1" "$root/share/bash-completion/completions" \
    "$root/share/zsh/site-functions" "$root/share/fish/vendor_completions.d"
install -m 0755 "$binary" "$root/bin/keychain"
"$binary" man > "$root/share/man/man1/keychain.1"
"$binary" completion bash > "$root/share/bash-completion/completions/keychain"
"$binary" completion zsh > "$root/share/zsh/site-functions/_keychain"
"$binary" completion fish > "$root/share/fish/vendor_completions.d/keychain.fish"
chmod 0644 "$root/share/man/man1/keychain.1" "$root/share/bash-completion/completions/keychain" \
    "$root/share/zsh/site-functions/_keychain" "$root/share/fish/vendor_completions.d/keychain.fish"
echo "installed $prefix/bin/keychain ($("$root/bin/keychain" --version)), its manual page and completions"
