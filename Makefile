# Two commands for a newcomer on a fresh machine:
#   make demo   materialize a small benchmark and evaluate the built-in baselines on it through lm-eval
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
	$(BIN)/pip install --quiet .

install-dev: $(BIN)/python
	$(BIN)/pip install --quiet "$(TORCH_SPEC)"
	$(BIN)/pip install --quiet -e ".[dev,hf]"

demo: install
	rm -rf $(DEMO)
	$(BIN)/lurch materialize --config find_the_origin --limit 64 --out $(DEMO)/data
	$(BIN)/lurch validate $(DEMO)/data --quiet
	$(BIN)/lurch eval --model lurch-solver --tasks find_the_origin --metadata '{"dataset_path": "$(DEMO)/data"}' --output_path $(DEMO)/results
	$(BIN)/lurch eval --model lurch-random --tasks find_the_origin --metadata '{"dataset_path": "$(DEMO)/data"}' --output_path $(DEMO)/results

test: install-dev
	$(BIN)/ruff check .
	$(BIN)/pytest -q -n 2

lint: install-dev
	$(BIN)/ruff check .

yamls:
	$(BIN)/python scripts/generate_yamls.py

golden:
	$(BIN)/python scripts/update_golden.py

# The performance referee (a few minutes): generation vs one tokenizer pass, and vs lm-eval's RULER generators
bench: install-dev
	$(BIN)/pip install --quiet -e ".[dev,hf,bench]"
	$(BIN)/python scripts/bench.py

clean:
	rm -rf $(DEMO) build dist *.egg-info
