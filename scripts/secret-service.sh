#!/usr/bin/env bash
# A private, headless Secret Service for tests and benchmarks: a session bus of its own and an
# unlocked gnome-keyring-daemon on it, isolated from the user's real keyrings.
#
#   eval "$(scripts/secret-service.sh start [DIR])"    # prints the exports; DIR (default: a new
#                                                     # temporary one) holds all state
#   scripts/secret-service.sh stop "$SECRET_SERVICE_DIR"
#
# With SECRET_SERVICE_PROVIDER=keychain, the provider is `$KEYCHAIN_COMMAND serve` over a
# vault in DIR instead (the same suites then run against keychain serve).
#
# Needs: dbus (dbus-daemon, dbus-send), gnome-keyring. Stops exactly the processes it started.
set -euo pipefail

start() {
    local dir=${1:-${SECRET_SERVICE_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/secret-service.XXXXXX")}}
    local password=${SECRET_SERVICE_PASSWORD:-test-password}
    mkdir -p "$dir/home" "$dir/run" "$dir/data"
    chmod 700 "$dir" "$dir/run"
    # The daemons inherit this environment: keep them away from the real home.
    export HOME="$dir/home" XDG_RUNTIME_DIR="$dir/run" XDG_DATA_HOME="$dir/data"
    unset DISPLAY WAYLAND_DISPLAY
    local out
    out=$(dbus-daemon --session --fork --address="unix:path=$dir/bus" --print-address=1 --print-pid=1)
    export DBUS_SESSION_BUS_ADDRESS=$(echo "$out" | sed -n 1p)
    local bus_pid=$(echo "$out" | sed -n 2p)
    echo "$bus_pid" > "$dir/bus.pid"
    if [ "${SECRET_SERVICE_PROVIDER:-gnome-keyring}" = keychain ]; then
        # Its output to a file: the caller's command substitution waits for every writer to close.
        KEYCHAIN_KERNEL_KEYRING=off "${KEYCHAIN_COMMAND:?SECRET_SERVICE_PROVIDER=keychain needs KEYCHAIN_COMMAND}" serve \
            </dev/null >"$dir/serve.log" 2>&1 &
        serve_pid=$!
    else
        # --unlock creates (or reopens) the 'login' collection with this password and makes it the
        # default alias, so storing never needs a prompt.
        printf '%s' "$password" | timeout 10 gnome-keyring-daemon --unlock --components=secrets --daemonize >/dev/null
    fi
    local owner=""
    for _ in $(seq 100); do
        if dbus-send --session --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.NameHasOwner \
            string:org.freedesktop.secrets 2>/dev/null | grep -q 'boolean true'; then
            owner=$(dbus-send --session --print-reply --dest=org.freedesktop.DBus / \
                org.freedesktop.DBus.GetConnectionUnixProcessID string:org.freedesktop.secrets | awk '/uint32/ {print $2}')
            break
        fi
        sleep 0.05
    done
    if [ -z "$owner" ]; then
        kill "$bus_pid" ${serve_pid:-} 2>/dev/null || true
        echo "secret-service.sh: ${SECRET_SERVICE_PROVIDER:-gnome-keyring} did not take org.freedesktop.secrets" >&2
        exit 1
    fi
    echo "$owner" > "$dir/keyring.pid"
    echo "export DBUS_SESSION_BUS_ADDRESS='$DBUS_SESSION_BUS_ADDRESS'"
    echo "export SECRET_SERVICE_DIR='$dir'"
    echo "export SECRET_SERVICE_KEYRING_PID=$owner"
    echo "export SECRET_SERVICE_BUS_PID=$bus_pid"
}

stop() {
    local dir=${1:?usage: secret-service.sh stop DIR}
    for file in keyring.pid bus.pid; do
        [ -f "$dir/$file" ] && kill "$(cat "$dir/$file")" 2>/dev/null || true
    done
    rm -rf "$dir"
}

case "${1:-start}" in
    start) start "${2:-}" ;;
    stop) stop "${2:-${SECRET_SERVICE_DIR:-}}" ;;
    *) echo "usage: $0 start [DIR] | stop DIR" >&2; exit 2 ;;
esac
