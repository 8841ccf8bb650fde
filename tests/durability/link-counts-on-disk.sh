#!/usr/bin/env bash
# Checks that a new thread's file is durable when its admission is answered:
# its name and its inode's link count both on the disk, not just in memory.
#
# The state directory sits on a fresh ext4 without a journal (a loop mount),
# where a directory fsync writes the directory but not the inode an O_TMPFILE
# link just gave a name. The server admits N runs on new threads against an
# A2A runtime that never answers, so each thread's file stays its first write.
# Three seconds later, long before the kernel's write-back (30 s), `debugfs`
# reads the image (what the disk would hold after a crash) and counts the
# link counts of the thread files. Every one must be 1.
#
# Needs root (mount, loop device), debugfs (e2fsprogs), curl and python3; not
# part of CI. Usage: link-counts-on-disk.sh [SERVER_BIN] [N]
# (SEQUENTIAL=1: one admission at a time; DIRTY=1: 300 MiB of other unwritten
# data meanwhile, so the store flushes file by file instead of with syncfs.)
set -euo pipefail
bin=${1:-target/release/iac-agui}
n=${2:-30}
work=$(mktemp -d)
img=$work/state.img
mnt=$work/mnt
port=18811
a2a_port=18812
cleanup() {
    kill "${server:-}" "${silent:-}" 2>/dev/null || true
    wait 2>/dev/null || true
    umount "$mnt" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

truncate -s 256M "$img"
mkfs.ext4 -q -F -O ^has_journal "$img"
mkdir "$mnt"
mount -o loop "$img" "$mnt"

# An A2A runtime that takes connections and never answers.
python3 -c '
import socket, sys
s = socket.create_server(("127.0.0.1", int(sys.argv[1])), backlog=1024)
held = []
while True:
    held.append(s.accept()[0])
' "$a2a_port" &
silent=$!
IAC_CODE_AGUI_ALLOWED_CWDS=/tmp "$bin" serve --port "$port" \
    --a2a-url "http://127.0.0.1:$a2a_port" --state-dir "$mnt/state" \
    >"$work/server.log" 2>&1 &
server=$!
for _ in $(seq 50); do
    curl -sf "http://127.0.0.1:$port/health" >/dev/null && break
    sleep 0.1
done
if [ -n "${DIRTY:-}" ]; then
    dd if=/dev/zero of="$work/dirty.bin" bs=1M count=300 status=none
fi

for i in $(seq "$n"); do
    body='{"threadId":"t'$i'","runId":"r'$i'","state":{},"tools":[],"context":[],
      "forwardedProps":{"iacCode":{"schemaVersion":1,"rosInvocationId":"ros","cwd":"/tmp"}},
      "messages":[{"id":"m'$i'","role":"user","content":"hello"}]}'
    curl -s -N --max-time 6 -H 'content-type: application/json' \
        "http://127.0.0.1:$port/" -d "$body" >"$work/run-$i.sse" &
    if [ -n "${SEQUENTIAL:-}" ]; then sleep 0.1; fi
done
sleep 3

started=$(grep -l RUN_STARTED "$work"/run-*.sse | wc -l || true)
echo "runs admitted: $started of $n; unwritten data: $(grep -E '^Dirty' /proc/meminfo | tr -s ' ')"
debugfs -R "ls -l /state/threads" "$img" 2>/dev/null |
    awk '$NF ~ /\.json$/ { print "stat <" $1 ">" }' >"$work/stat"
echo "thread names on the disk: $(wc -l <"$work/stat")"
counts=$(debugfs -f "$work/stat" "$img" 2>/dev/null | grep -o 'Links: [0-9]*' | sort | uniq -c || true)
echo "$counts"
[ "$started" -eq "$n" ] && [ "$(wc -l <"$work/stat")" -eq "$n" ] &&
    ! grep -q 'Links: 0' <<<"$counts" && echo PASS || { echo FAIL; exit 1; }
