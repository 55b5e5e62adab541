"""gtog: GraphRAG with Think-on-Graph search and an evaluation harness."""

import os

# LiteLLM fetches its model price map from the internet at import time unless told
# not to; gtog must work offline, and the bundled map is what we report costs from.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

__version__ = "0.1.0"
"""gtog's version."""

__all__ = ["__version__"]
