#!/usr/bin/env bash
# Start llama.cpp's OpenAI-compatible server for a GGUF file you already have, with the settings that
# matter on a CPU. It never downloads anything.
#
#   scripts/llama-server.sh PATH.gguf [--port N] [--ctx N] [--threads N] [--host H] [-- EXTRA llama-server ARGS]
#
# llama-server is taken from $LLAMA_SERVER, else from PATH. Defaults: 127.0.0.1, port 19200, context
# 4096 tokens, one slot (-np 1: the whole context for one request), threads = CPU cores,
# OMP_WAIT_POLICY=PASSIVE (idle OpenMP threads sleep instead of spinning on the cores the bot needs),
# --jinja (the model's own chat template). It prints the OPENAI_BASE_URL / KB_CHAT_MODEL settings for kb.
set -euo pipefail

usage() {
    sed -n '5p' "$0" | sed 's/^# *//' >&2
    exit 2
}

model=""
port=19200
host=127.0.0.1
ctx=4096
threads=""
extra=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --port) port="${2:?--port needs a number}"; shift 2 ;;
        --ctx) ctx="${2:?--ctx needs a number}"; shift 2 ;;
        --threads) threads="${2:?--threads needs a number}"; shift 2 ;;
        --host) host="${2:?--host needs an address}"; shift 2 ;;
        -h|--help) usage ;;
        --) shift; extra=("$@"); break ;;
        -*) echo "error: unknown option $1" >&2; usage ;;
        *) [[ -z "$model" ]] || { echo "error: one GGUF file only (got $model and $1)" >&2; exit 2; }
           model="$1"; shift ;;
    esac
done

[[ -n "$model" ]] || { echo "error: give the path of a GGUF model file" >&2; usage; }
if [[ ! -f "$model" ]]; then
    echo "error: no model file at $model (this script never downloads one; give the path of a .gguf you have)" >&2
    exit 2
fi
if [[ "$(head -c 4 "$model")" != "GGUF" ]]; then
    echo "error: $model is not a GGUF file (it does not start with the GGUF magic bytes)" >&2
    exit 2
fi

server="${LLAMA_SERVER:-}"
if [[ -z "$server" ]]; then
    server="$(command -v llama-server || true)"
fi
if [[ -z "$server" || ! -x "$server" ]]; then
    echo "error: llama-server not found${LLAMA_SERVER:+ at LLAMA_SERVER=$LLAMA_SERVER}; put llama.cpp's llama-server on PATH or set LLAMA_SERVER=/path/to/llama-server" >&2
    exit 127
fi

if [[ -z "$threads" ]]; then
    threads="$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 4)"
fi
name="$(basename "$model" .gguf)"

cat <<EOF
llama-server: $server
model:        $model ($threads threads, context $ctx tokens, 1 slot)
Use it with kb:
  export OPENAI_BASE_URL=http://$host:$port/v1
  export OPENAI_API_KEY=local
  export KB_CHAT_MODEL=$name
EOF

export OMP_WAIT_POLICY=PASSIVE
"$server" -m "$model" --host "$host" --port "$port" -c "$ctx" -np 1 -t "$threads" --jinja "${extra[@]}" &
child=$!
trap 'kill -TERM "$child" 2>/dev/null' TERM INT
status=0
wait "$child" || status=$?
if kill -0 "$child" 2>/dev/null; then  # wait was interrupted by a signal: let the server finish
    wait "$child" || status=$?
fi
if [[ $status -eq 139 ]]; then
    echo "llama-server crashed (segmentation fault). A CPU with AMX inside a VM that does not enable AMX faults in weight repacking: start it again with: $0 $model -- --no-repack" >&2
fi
exit $status
