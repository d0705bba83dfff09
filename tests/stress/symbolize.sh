#!/usr/bin/env bash
# symbolize.sh BINARY - copy stdin to stdout, naming the function and line of each frame of a
# lock watchdog report that lies in BINARY: the report prints "(torture+0x1234)" (a program's
# own functions are not exported, so the watchdog cannot name them itself), and this appends
# what `addr2line -f -i -e BINARY 0x1234` says. Without addr2line, stdin passes unchanged.
set -u
bin=$1
name=$(basename "$bin")
if ! command -v addr2line >/dev/null 2>&1; then
	exec cat
fi
input=$(cat)
# One addr2line for every offset. The offset is of a return address: one byte back is inside
# the call, whose line is the one wanted.
mapfile -t offsets < <(printf '%s\n' "$input" |
	grep -o "($name+0x[0-9a-f]*)" | sed "s/^($name+//; s/)$//" | sort -u)
declare -A where
for off in "${offsets[@]}"; do
	where[$off]=$(addr2line -f -i -e "$bin" "$(printf '%#x' $((off - 1)))" 2>/dev/null |
		sed 's/ (discriminator [0-9]*)$//; s#^.*/\(src\|tests\|tools\)/#\1/#' |
		paste -sd ' ' | sed 's/ \([^ ]*:[0-9?]*\)/ at \1,/g; s/,$//')
done
while IFS= read -r line; do
	off=$(printf '%s\n' "$line" | grep -o "($name+0x[0-9a-f]*)" | head -1 |
		sed "s/^($name+//; s/)$//")
	if [ -n "$off" ] && [ -n "${where[$off]:-}" ]; then
		printf '%s %s\n' "$line" "${where[$off]}"
	else
		printf '%s\n' "$line"
	fi
done <<<"$input"
