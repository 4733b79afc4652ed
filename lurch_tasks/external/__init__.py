"""Other benchmarks' items measured with the LURCH properties (`lurch properties`)."""

# The adapters' names (``adapters.ADAPTERS``), here so `lurch --help` need not import the measuring code.
ADAPTER_NAMES = ("babi", "generic", "hotpotqa", "lurch", "ruler")
