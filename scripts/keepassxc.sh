#!/usr/bin/env bash
# KeePassXC as the Secret Service on a private, headless session bus, for tests and for trying a
# switch by hand: one database per label, made with keepassxc-cli, each showing its root group
# to the Secret Service, all opened by one keepassxc under Qt's offscreen platform (no X server,
# no window) with its access and delete confirmations off.
#
#   eval "$(scripts/keepassxc.sh start [DIR [LABEL...]])"   # prints the exports; LABELs default
#                                                           # to "Passwords" (the default alias's)
#   scripts/keepassxc.sh stop "$KEEPASSXC_DIR"
#
# Every database opens with KEEPASSXC_PASSWORD (default test-password). Which group a database
# shows to the Secret Service is a setting of the database (its custom data
# FDO_SECRETS_EXPOSED_GROUP), which keepassxc-cli has no command for: each database is imported
# from a KeePass XML file that carries it. Needs: dbus, keepassxc. Stops exactly what it started.
set -euo pipefail

# Text for an XML element.
xml_text() {
    local text=${1//&/&amp;}
    text=${text//</&lt;}
    printf '%s' "${text//>/&gt;}"
}

start() {
    local dir=${1:-$(mktemp -d "${TMPDIR:-/tmp}/keepassxc.XXXXXX")}
    shift || true
    local labels=("$@")
    [ ${#labels[@]} -gt 0 ] || labels=(Passwords)
    local password=${KEEPASSXC_PASSWORD:-test-password}
    mkdir -p "$dir/home" "$dir/run" "$dir/tmp" "$dir/databases"
    chmod 700 "$dir" "$dir/run"
    # keepassxc keeps its single-instance lock and socket in TMPDIR, its caches in the home.
    export HOME="$dir/home" XDG_RUNTIME_DIR="$dir/run" TMPDIR="$dir/tmp" XDG_CONFIG_HOME="$dir/home/.config" \
        XDG_CACHE_HOME="$dir/home/.cache" XDG_DATA_HOME="$dir/home/.local/share" QT_QPA_PLATFORM=offscreen
    unset DISPLAY WAYLAND_DISPLAY

    local files=() index=0
    for label in "${labels[@]}"; do
        index=$((index + 1))
        local hex
        hex=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
        local uuid="{${hex:0:8}-${hex:8:4}-${hex:12:4}-${hex:16:4}-${hex:20:12}}"
        local encoded
        encoded=$(printf "$(printf '%s' "$hex" | sed 's/../\\x&/g')" | base64)
        cat >"$dir/databases/$index.xml" <<EOF
<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<KeePassFile>
	<Meta>
		<Generator>KeePassXC</Generator>
		<DatabaseName>$(xml_text "$label")</DatabaseName>
		<RecycleBinEnabled>False</RecycleBinEnabled>
		<CustomData>
			<Item><Key>FDO_SECRETS_EXPOSED_GROUP</Key><Value>$uuid</Value></Item>
		</CustomData>
	</Meta>
	<Root>
		<Group>
			<UUID>$encoded</UUID>
			<Name>$(xml_text "$label")</Name>
		</Group>
	</Root>
</KeePassFile>
EOF
        # The cheapest key derivation keepassxc-cli sets: opening is what the tests wait for.
        printf '%s\n%s\n' "$password" "$password" |
            keepassxc-cli import -q -p -t 100 "$dir/databases/$index.xml" "$dir/databases/db$index.kdbx" >/dev/null 2>"$dir/import.err" || {
            cat "$dir/import.err" >&2
            exit 1
        }
        files+=("$dir/databases/db$index.kdbx")
    done

    cat >"$dir/keepassxc.ini" <<'EOF'
[General]
SingleInstance=false
RememberLastDatabases=false
RememberLastKeyFiles=false
OpenPreviousDatabasesOnStartup=false
[GUI]
ShowTrayIcon=false
CheckForUpdates=false
CheckForUpdatesNextCheck=0
[Security]
LockDatabaseIdle=false
LockDatabaseScreenLock=false
[FdoSecrets]
Enabled=true
ShowNotification=false
ConfirmDeleteItem=false
ConfirmAccessItem=false
UnlockBeforeSearch=false
EOF

    # A bus of its own whose configuration names no service directory: nothing else is ever
    # started on it (gnome-keyring above all) by a call to org.freedesktop.secrets.
    cat >"$dir/bus.conf" <<EOF
<busconfig><type>session</type><listen>unix:path=$dir/bus</listen><policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy></busconfig>
EOF
    local out
    out=$(dbus-daemon --config-file="$dir/bus.conf" --fork --print-address=1 --print-pid=1)
    export DBUS_SESSION_BUS_ADDRESS=$(echo "$out" | sed -n 1p)
    local bus_pid=$(echo "$out" | sed -n 2p)
    echo "$bus_pid" >"$dir/bus.pid"

    # One password line per database, read from standard input. The first LABEL's is opened
    # last: the default alias follows the database keepassxc shows, the one opened last. Its
    # output to a file: the caller's command substitution waits for every writer to close.
    local opened=()
    for ((index = ${#files[@]} - 1; index >= 0; index--)); do opened+=("${files[index]}"); done
    { for _ in "${files[@]}"; do printf '%s\n' "$password"; done; } |
        keepassxc --pw-stdin --config "$dir/keepassxc.ini" --localconfig "$dir/keepassxc-local.ini" "${opened[@]}" >"$dir/keepassxc.log" 2>&1 &
    local keepassxc_pid=$!
    echo "$keepassxc_pid" >"$dir/keepassxc.pid"

    # Ready when every database is a collection on the bus, unlocked.
    local ready=""
    for _ in $(seq 200); do
        local listed
        listed=$(dbus-send --session --print-reply --dest=org.freedesktop.secrets /org/freedesktop/secrets org.freedesktop.DBus.Properties.Get \
            string:org.freedesktop.Secret.Service string:Collections 2>/dev/null | grep -o '"/org/freedesktop/secrets/collection/[^"]*"' | tr -d '"' || true)
        if [ "$(printf '%s' "$listed" | grep -c .)" -eq ${#files[@]} ]; then
            ready=yes
            for path in $listed; do
                dbus-send --session --print-reply --dest=org.freedesktop.secrets "$path" org.freedesktop.DBus.Properties.Get \
                    string:org.freedesktop.Secret.Collection string:Locked 2>/dev/null | grep -q 'boolean false' || ready=""
            done
            [ -n "$ready" ] && break
        fi
        kill -0 "$keepassxc_pid" 2>/dev/null || break
        sleep 0.05
    done
    if [ -z "$ready" ]; then
        kill "$keepassxc_pid" "$bus_pid" 2>/dev/null || true
        echo "keepassxc.sh: keepassxc did not show its databases' collections, unlocked, on org.freedesktop.secrets:" >&2
        cat "$dir/keepassxc.log" >&2
        exit 1
    fi
    echo "export DBUS_SESSION_BUS_ADDRESS='$DBUS_SESSION_BUS_ADDRESS'"
    echo "export KEEPASSXC_DIR='$dir'"
    echo "export KEEPASSXC_PID=$keepassxc_pid"
    echo "export KEEPASSXC_BUS_PID=$bus_pid"
}

stop() {
    local dir=${1:?usage: keepassxc.sh stop DIR}
    local pid
    for file in keepassxc.pid bus.pid; do
        [ -f "$dir/$file" ] || continue
        pid=$(cat "$dir/$file")
        kill "$pid" 2>/dev/null || continue
        # Not this shell's child: polled, so that the folder goes after the process. keepassxc
        # may not end on SIGTERM (it waits on a dialog no one sees): then SIGKILL.
        for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
        kill -9 "$pid" 2>/dev/null || true
    done
    rm -rf "$dir"
}

case "${1:-start}" in
    start)
        shift || true
        start "$@"
        ;;
    stop) stop "${2:-${KEEPASSXC_DIR:-}}" ;;
    *)
        echo "usage: $0 start [DIR [LABEL...]] | stop DIR" >&2
        exit 2
        ;;
esac
