import os

# No test may touch the network: the Hub libraries must work from local files only.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
# lm-eval docs are cached on disk (harness.doc_cache): off for the suite, so no test reads or fills the user's
# cache; the cache's own tests switch it on in a temporary folder.
os.environ["LURCH_CACHE_DIR"] = "off"
