"""lm-eval glue: docs, metrics, YAMLs, baseline models and the `lurch eval` wrapper."""
