#!/usr/bin/env bash
# Builds the PAM module (docs/login.md) with the C compiler alone, so that nothing but libc
# enters the login program, and installs it beside the login's own modules, with the profile
# that Debian's and Ubuntu's pam-auth-update enables it by. It changes no /etc/pam.d file.
#
#   sudo scripts/install-pam.sh                  # for /usr/local/bin/keychain (scripts/install.sh as root)
#   sudo scripts/install-pam.sh --prefix DIR     # for DIR/bin/keychain; DESTDIR is honoured for packaging
#   sudo pam-auth-update --enable keychain       # then every login opens the user's vault
set -euo pipefail
cd "$(dirname "$0")/.."

prefix=/usr/local
. scripts/install-arguments.sh
read_install_arguments "$0" "$@"
case "$prefix" in /*) ;; *) echo "install-pam.sh: --prefix takes an absolute directory (the module runs DIR/bin/keychain as given)" >&2; exit 2 ;; esac
# The module runs only a helper that root owns and no one else may write: a user's own copy
# would be refused at every login.
if [ -z "${DESTDIR:-}" ] && [ "$(id -u)" -ne 0 ]; then
    echo "install-pam.sh: run it as root: the module and the keychain it runs must be root's" >&2
    exit 1
fi
helper="$prefix/bin/keychain"

# Where the login's own modules are: pam_unix.so's directory.
multiarch=$(cc -print-multiarch 2>/dev/null || true)
security=""
for directory in ${multiarch:+/lib/$multiarch/security /usr/lib/$multiarch/security} /lib64/security /usr/lib64/security /lib/security /usr/lib/security; do
    if [ -e "$directory/pam_unix.so" ]; then security=$directory; break; fi
done
[ -n "$security" ] || { echo "install-pam.sh: no PAM module directory (none holds pam_unix.so)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -shared -fPIC -O2 -I Sources/CPAMKeychain/include -o "$work/pam_keychain.so" Sources/CPAMKeychain/pam_keychain.c
sed "s|/usr/local/bin/keychain|$helper|" scripts/pam-configs/keychain > "$work/profile"
install -d "${DESTDIR:-}$security" "${DESTDIR:-}/usr/share/pam-configs"
install -m 0644 "$work/pam_keychain.so" "${DESTDIR:-}$security/pam_keychain.so"
install -m 0644 "$work/profile" "${DESTDIR:-}/usr/share/pam-configs/keychain"
echo "installed $security/pam_keychain.so (it runs $helper) and /usr/share/pam-configs/keychain"
[ -n "${DESTDIR:-}" ] || [ -x "$helper" ] || echo "install-pam.sh: $helper is missing: install the command there (scripts/install.sh) before enabling the module" >&2
if [ -x /usr/sbin/pam-auth-update ]; then
    echo "enable it for every login with: pam-auth-update --enable keychain"
else
    echo "enable it by adding the module's lines of docs/login.md to /etc/pam.d"
fi
