#!/usr/bin/env bash
# KWallet (kwalletd5 with its Secret Service API on) as the Secret Service on a private,
# headless session bus, for tests and for trying a switch by hand: one wallet per label, the
# first the default alias's, all unlocked, under Qt's offscreen platform (no X server).
#
#   eval "$(scripts/kwallet.sh start [DIR [LABEL...]])"   # prints the exports; LABELs default
#                                                         # to "kdewallet"
#   scripts/kwallet.sh stop "$KWALLET_DIR"
#
# kwalletd makes a wallet only through its first-use dialog, or at login through pam_kwallet,
# which hands it the login password's hash (PBKDF2-SHA512 over the wallet's salt file) on a pipe
# and the session's environment on a socket (`kwalletd5 --pam-login PIPE SOCKET`). This script
# plays pam_kwallet's part once per wallet, with an empty password: kwalletd then opens these
# wallets itself, without a dialog, when a client unlocks their collection (a real wallet's
# password is asked in kwalletd's dialog, or given by pam_kwallet at login).
# Needs: dbus, kwalletd5 (libkf5wallet-bin), libqca-qt5-2-plugins (the Secret Service's
# dh-ietf1024 sessions), python3. Stops exactly what it started.
set -euo pipefail

# Starts kwalletd5 as pam_kwallet does, opening (making, when missing) the wallet LABEL with an
# empty password; prints its process id.
start_with_login() {
    python3 - "$1" <<'EOF'
import hashlib, os, socket, subprocess, sys
save = os.environ["XDG_DATA_HOME"] + "/kwalletd"
os.makedirs(save, exist_ok=True)
# pam_kwallet's salt file: the wallet's name, encoded as kwalletd encodes it (each UTF-8 byte
# outside its allowed characters as ';' and two hex digits), with .salt.
allowed = set(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789^&'@{}[],$=!-#()%.+_\r\n\t\f\v ")
name = "".join(chr(b) if b in allowed else ";%02X" % b for b in sys.argv[1].encode())
salt_path = save + "/" + name + ".salt"
if not os.path.exists(salt_path):
    with open(salt_path, "wb") as salt_file:
        salt_file.write(os.urandom(56))
with open(salt_path, "rb") as salt_file:
    digest = hashlib.pbkdf2_hmac("sha512", b"", salt_file.read(), 50000, 56)
read_end, write_end = os.pipe()
path = os.environ["XDG_RUNTIME_DIR"] + "/kwallet5.socket"
if os.path.exists(path):
    os.unlink(path)
listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
listener.bind(path)
listener.listen(1)
with open(os.environ["KWALLET_LOG"], "ab") as log:
    child = subprocess.Popen(
        ["kwalletd5", "--pam-login", str(read_end), str(listener.fileno())], pass_fds=(read_end, listener.fileno()),
        env=dict(os.environ, PAM_KWALLET5_LOGIN=path), stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
os.close(read_end)
os.write(write_end, digest)
os.close(write_end)
client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
client.connect(path)
client.sendall(("DBUS_SESSION_BUS_ADDRESS=%s\n" % os.environ["DBUS_SESSION_BUS_ADDRESS"]).encode())
client.close()
listener.close()
os.unlink(path)
print(child.pid)
EOF
}

# Writes kwalletrc with the wallet LABEL as the default one.
configure() {
    cat >"$XDG_CONFIG_HOME/kwalletrc" <<EOF
[Wallet]
Enabled=true
First Use=false
Use One Wallet=true
Default Wallet=$1
Prompt on Open=false
Close When Idle=false
Launch Manager=false
[org.freedesktop.secrets]
apiEnabled=true
EOF
}

# Stops the process PID and waits until it is gone (not this shell's child: polled).
end() {
    kill "$1" 2>/dev/null || return 0
    for _ in $(seq 100); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.05; done
    kill -9 "$1" 2>/dev/null || true
}

property() { # PATH INTERFACE NAME
    dbus-send --session --print-reply --dest=org.freedesktop.secrets "$1" org.freedesktop.DBus.Properties.Get string:"$2" string:"$3" 2>/dev/null
}

start() {
    local dir=${1:-$(mktemp -d "${TMPDIR:-/tmp}/kwallet.XXXXXX")}
    shift || true
    local labels=("$@")
    [ ${#labels[@]} -gt 0 ] || labels=(kdewallet)
    mkdir -p "$dir/home/.config" "$dir/home/.local/share" "$dir/run" "$dir/tmp"
    chmod 700 "$dir" "$dir/run"
    export HOME="$dir/home" XDG_RUNTIME_DIR="$dir/run" TMPDIR="$dir/tmp" XDG_CONFIG_HOME="$dir/home/.config" \
        XDG_CACHE_HOME="$dir/home/.cache" XDG_DATA_HOME="$dir/home/.local/share" QT_QPA_PLATFORM=offscreen KWALLET_LOG="$dir/kwalletd.log"
    unset DISPLAY WAYLAND_DISPLAY

    # A bus of its own whose configuration names no service directory: nothing else is ever
    # started on it by a call to org.freedesktop.secrets.
    cat >"$dir/bus.conf" <<EOF
<busconfig><type>session</type><listen>unix:path=$dir/bus</listen><policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy></busconfig>
EOF
    local out
    out=$(dbus-daemon --config-file="$dir/bus.conf" --fork --print-address=1 --print-pid=1)
    export DBUS_SESSION_BUS_ADDRESS=$(echo "$out" | sed -n 1p)
    local bus_pid=$(echo "$out" | sed -n 2p)
    echo "$bus_pid" >"$dir/bus.pid"

    # One login per wallet: each makes its wallet file, then kwalletd is stopped (it lists
    # the wallets it serves as collections when it starts).
    local count=0 pid
    for label in "${labels[@]}"; do
        count=$((count + 1))
        configure "$label"
        pid=$(start_with_login "$label")
        echo "$pid" >"$dir/kwalletd.pid"
        for _ in $(seq 200); do
            [ "$(find "$XDG_DATA_HOME/kwalletd" -name '*.kwl' -size +0 | wc -l)" -ge "$count" ] && break
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.05
        done
        end "$pid"
    done

    configure "${labels[0]}"
    kwalletd5 </dev/null >>"$KWALLET_LOG" 2>&1 &
    pid=$!
    echo "$pid" >"$dir/kwalletd.pid"

    # Ready when every wallet is a collection; then each is unlocked through the Secret
    # Service (Unlock, and its prompt: kwalletd opens a wallet of an empty password itself).
    local ready="" listed=""
    for _ in $(seq 200); do
        listed=$(property /org/freedesktop/secrets org.freedesktop.Secret.Service Collections | grep -o '"/org/freedesktop/secrets/collection/[^"]*"' | tr -d '"' || true)
        [ "$(printf '%s' "$listed" | grep -c .)" -eq ${#labels[@]} ] && ready=yes && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    if [ -n "$ready" ]; then
        for path in $listed; do
            local prompt
            prompt=$(dbus-send --session --print-reply --dest=org.freedesktop.secrets /org/freedesktop/secrets org.freedesktop.Secret.Service.Unlock \
                array:objpath:"$path" | grep -o '"/org/freedesktop/secrets/prompt/[^"]*"' | tr -d '"' || true)
            [ -z "$prompt" ] || dbus-send --session --print-reply --dest=org.freedesktop.secrets "$prompt" org.freedesktop.Secret.Prompt.Prompt string: >/dev/null
            ready=""
            for _ in $(seq 200); do
                property "$path" org.freedesktop.Secret.Collection Locked | grep -q 'boolean false' && ready=yes && break
                sleep 0.05
            done
            [ -n "$ready" ] || break
        done
    fi
    if [ -z "$ready" ]; then
        end "$pid"
        kill "$bus_pid" 2>/dev/null || true
        echo "kwallet.sh: kwalletd5 did not show its wallets' collections, unlocked, on org.freedesktop.secrets:" >&2
        cat "$KWALLET_LOG" >&2
        exit 1
    fi
    echo "export DBUS_SESSION_BUS_ADDRESS='$DBUS_SESSION_BUS_ADDRESS'"
    echo "export KWALLET_DIR='$dir'"
    echo "export KWALLET_PID=$pid"
    echo "export KWALLET_BUS_PID=$bus_pid"
}

stop() {
    local dir=${1:?usage: kwallet.sh stop DIR}
    for file in kwalletd.pid bus.pid; do
        [ -f "$dir/$file" ] && end "$(cat "$dir/$file")"
    done
    rm -rf "$dir"
}

case "${1:-start}" in
    start)
        shift || true
        start "$@"
        ;;
    stop) stop "${2:-${KWALLET_DIR:-}}" ;;
    *)
        echo "usage: $0 start [DIR [LABEL...]] | stop DIR" >&2
        exit 2
        ;;
esac
