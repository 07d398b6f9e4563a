#!/usr/bin/env bash
# A 3-member etcd cluster on loopback, for the sync tests and the benchmark.
#
#   scripts/etcd-cluster.sh start DIR [PORT0]   start members n1..n3 (data and logs under DIR), wait until healthy,
#                                              print the client endpoints (comma-separated)
#   scripts/etcd-cluster.sh stop DIR            stop exactly the members this script started under DIR
#   scripts/etcd-cluster.sh kill|pause|resume|restart DIR N
#                                              SIGKILL, SIGSTOP, SIGCONT member N, or start it again from its data
#   scripts/etcd-cluster.sh endpoints DIR       the client endpoints
#   scripts/etcd-cluster.sh compact DIR         compact the history up to the current revision
#
# Member N listens for clients on PORT0+10N and for peers on PORT0+10N+1 (PORT0 defaults to 32300),
# on 127.0.0.1 only; start refuses ports already in use (exit 4). Needs Debian's etcd-server and etcd-client.
# With DIR/tls/{ca.crt,server.crt,server.key,client.crt,client.key} in place before start, clients
# must speak TLS and present a certificate signed by that CA (peers stay plain, on loopback).
set -euo pipefail

command=${1:-}
dir=${2:-}
[ -n "$command" ] && [ -n "$dir" ] || { sed -n '2,14p' "$0" >&2; exit 2; }

port0() { cat "$dir/port0"; }
tls() { [ -f "$dir/tls/ca.crt" ]; }
scheme() { if tls; then echo https; else echo http; fi; }
client_url() { echo "$(scheme)://127.0.0.1:$(($(port0) + $1 * 10))"; }
peer_url() { echo "http://127.0.0.1:$(($(port0) + $1 * 10 + 1))"; }
endpoints() { echo "$(client_url 1),$(client_url 2),$(client_url 3)"; }
cluster() { echo "n1=$(peer_url 1),n2=$(peer_url 2),n3=$(peer_url 3)"; }
pid_of() { cat "$dir/n$1.pid" 2>/dev/null || true; }
# Running, and not a zombie waiting for a parent to reap it.
running() { [ -r "/proc/$1/stat" ] && ! awk '{ exit ($3 == "Z") ? 0 : 1 }' "/proc/$1/stat" 2>/dev/null; }
alive() { local pid; pid=$(pid_of "$1"); [ -n "$pid" ] && running "$pid"; }

member() {
    local n=$1
    local security=()
    if tls; then
        security=(--cert-file "$dir/tls/server.crt" --key-file "$dir/tls/server.key"
            --trusted-ca-file "$dir/tls/ca.crt" --client-cert-auth)
    fi
    # setsid: the members outlive the shell that started them, and a terminal's signals miss them.
    # Progress notifications every 100 ms (etcd's default is 10 minutes): sync's reads of a key's
    # history end at the first, which etcd sends only once it has replayed that history.
    setsid etcd --name "n$n" --data-dir "$dir/n$n" \
        --listen-client-urls "$(client_url "$n")" --advertise-client-urls "$(client_url "$n")" \
        --listen-peer-urls "$(peer_url "$n")" --initial-advertise-peer-urls "$(peer_url "$n")" \
        --initial-cluster "$(cluster)" --initial-cluster-token "keychain-$(port0)" --initial-cluster-state new \
        --heartbeat-interval 50 --election-timeout 500 --experimental-watch-progress-notify-interval 100ms --logger zap --log-outputs "$dir/n$n.log" "${security[@]}" \
        </dev/null >/dev/null 2>&1 &
    echo $! > "$dir/n$n.pid"
}

etcdctl_() {
    local security=()
    tls && security=(--cacert "$dir/tls/ca.crt" --cert "$dir/tls/client.crt" --key "$dir/tls/client.key")
    ETCDCTL_API=3 etcdctl --endpoints="$(endpoints)" "${security[@]}" "$@"
}
healthy() { etcdctl_ --dial-timeout=300ms --command-timeout=500ms endpoint health >/dev/null 2>&1; }
# Whether something already listens on a loopback port.
taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

case $command in
start)
    command -v etcd >/dev/null || { echo "etcd is not installed (apt-get install etcd-server etcd-client)" >&2; exit 3; }
    mkdir -p "$dir"
    echo "${3:-32300}" > "$dir/port0"
    for n in 1 2 3; do
        for port in $(($(port0) + n * 10)) $(($(port0) + n * 10 + 1)); do
            taken "$port" && { echo "port $port is in use; choose another PORT0" >&2; exit 4; }
        done
    done
    for n in 1 2 3; do member "$n"; done
    deadline=$((SECONDS + 15))
    while [ "$SECONDS" -lt "$deadline" ]; do
        healthy && { endpoints; exit 0; }
        for n in 1 2 3; do alive "$n" || { echo "etcd member n$n exited; see $dir/n$n.log" >&2; "$0" stop "$dir"; exit 1; }; done
        sleep 0.05
    done
    echo "the etcd cluster under $dir did not become healthy in 15 s" >&2
    "$0" stop "$dir"; exit 1 ;;
stop)
    for n in 1 2 3; do
        pid=$(pid_of "$n"); [ -n "$pid" ] || continue
        kill -CONT "$pid" 2>/dev/null || true
        kill "$pid" 2>/dev/null || true
    done
    # A member stopping with the others tries to hand its leadership on for seconds; its
    # write-ahead log is crash-safe, so after a moment's grace it is killed.
    for n in 1 2 3; do
        pid=$(pid_of "$n"); [ -n "$pid" ] || continue
        for _ in $(seq 1 10); do running "$pid" || break; sleep 0.05; done
        kill -9 "$pid" 2>/dev/null || true
        for _ in $(seq 1 40); do running "$pid" || break; sleep 0.05; done
        rm -f "$dir/n$n.pid"
    done ;;
kill) kill -9 "$(pid_of "$3")"; rm -f "$dir/n$3.pid" ;;
pause) kill -STOP "$(pid_of "$3")" ;;
resume) kill -CONT "$(pid_of "$3")" ;;
restart) alive "$3" && { echo "member n$3 is running" >&2; exit 1; }; member "$3" ;;
endpoints) endpoints ;;
compact)
    revision=$(etcdctl_ endpoint status -w json | grep -o '"revision":[0-9]*' | head -1 | cut -d: -f2)
    etcdctl_ compact "$revision" >/dev/null
    echo "$revision" ;;
*) sed -n '2,14p' "$0" >&2; exit 2 ;;
esac
