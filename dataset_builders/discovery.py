"""Hugging Face builder for the discovery family (attention by discovery): one BuilderConfig per registered task.

Use through ``lurch materialize`` (or ``lurch_tasks.hub.build.materialize``); datasets 5.x no longer loads
builder scripts by path, but the class can be instantiated and run directly::

    builder = Discovery(cache_dir="cache", config_name="discovery_code", limit=8)
    builder.download_and_prepare(num_proc=2)
    dataset = builder.as_dataset(split="test")
"""

from __future__ import annotations

from ._builder import LurchBuilder, family_builder_attrs

_ATTRS = family_builder_attrs("discovery")


class Discovery(LurchBuilder):
    FAMILY = _ATTRS["FAMILY"]
    VERSION = _ATTRS["VERSION"]
    BUILDER_CONFIGS = _ATTRS["BUILDER_CONFIGS"]
    DEFAULT_CONFIG_NAME = _ATTRS["DEFAULT_CONFIG_NAME"]
