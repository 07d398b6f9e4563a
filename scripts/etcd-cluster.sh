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
# on 127.0.0.1 only. Needs Debian's etcd-server and etcd-client.
set -euo pipefail

command=${1:-}
dir=${2:-}
[ -n "$command" ] && [ -n "$dir" ] || { sed -n '2,14p' "$0" >&2; exit 2; }

port0() { cat "$dir/port0"; }
client_url() { echo "http://127.0.0.1:$(($(port0) + $1 * 10))"; }
peer_url() { echo "http://127.0.0.1:$(($(port0) + $1 * 10 + 1))"; }
endpoints() { echo "$(client_url 1),$(client_url 2),$(client_url 3)"; }
cluster() { echo "n1=$(peer_url 1),n2=$(peer_url 2),n3=$(peer_url 3)"; }
pid_of() { cat "$dir/n$1.pid" 2>/dev/null || true; }
alive() { local pid; pid=$(pid_of "$1"); [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; }

member() {
    local n=$1
    # setsid: the members outlive the shell that started them, and a terminal's signals miss them.
    setsid etcd --name "n$n" --data-dir "$dir/n$n" \
        --listen-client-urls "$(client_url "$n")" --advertise-client-urls "$(client_url "$n")" \
        --listen-peer-urls "$(peer_url "$n")" --initial-advertise-peer-urls "$(peer_url "$n")" \
        --initial-cluster "$(cluster)" --initial-cluster-token "keychain-$(port0)" --initial-cluster-state new \
        --heartbeat-interval 50 --election-timeout 500 --logger zap --log-outputs "$dir/n$n.log" \
        </dev/null >/dev/null 2>&1 &
    echo $! > "$dir/n$n.pid"
}

healthy() { ETCDCTL_API=3 etcdctl --endpoints="$(endpoints)" --command-timeout=1s endpoint health >/dev/null 2>&1; }

case $command in
start)
    command -v etcd >/dev/null || { echo "etcd is not installed (apt-get install etcd-server etcd-client)" >&2; exit 3; }
    mkdir -p "$dir"
    echo "${3:-32300}" > "$dir/port0"
    for n in 1 2 3; do member "$n"; done
    for _ in $(seq 1 200); do
        healthy && { endpoints; exit 0; }
        for n in 1 2 3; do alive "$n" || { echo "etcd member n$n exited; see $dir/n$n.log" >&2; "$0" stop "$dir"; exit 1; }; done
        sleep 0.05
    done
    echo "the etcd cluster under $dir did not become healthy in 10 s" >&2
    "$0" stop "$dir"; exit 1 ;;
stop)
    for n in 1 2 3; do
        pid=$(pid_of "$n"); [ -n "$pid" ] || continue
        kill -CONT "$pid" 2>/dev/null || true
        kill "$pid" 2>/dev/null || true
    done
    for n in 1 2 3; do
        pid=$(pid_of "$n"); [ -n "$pid" ] || continue
        for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
        kill -9 "$pid" 2>/dev/null || true
        rm -f "$dir/n$n.pid"
    done ;;
kill) kill -9 "$(pid_of "$3")"; rm -f "$dir/n$3.pid" ;;
pause) kill -STOP "$(pid_of "$3")" ;;
resume) kill -CONT "$(pid_of "$3")" ;;
restart) alive "$3" && { echo "member n$3 is running" >&2; exit 1; }; member "$3" ;;
endpoints) endpoints ;;
compact)
    revision=$(ETCDCTL_API=3 etcdctl --endpoints="$(endpoints)" endpoint status -w json | grep -o '"revision":[0-9]*' | head -1 | cut -d: -f2)
    ETCDCTL_API=3 etcdctl --endpoints="$(endpoints)" compact "$revision" >/dev/null
    echo "$revision" ;;
*) sed -n '2,14p' "$0" >&2; exit 2 ;;
esac
