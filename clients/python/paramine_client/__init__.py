"""Python client of paramine's HTTP API: `Paramine(url)` and the contract's models (`paramine_client.models`,
generated from openapi.yaml)."""

from . import models
from .client import Paramine, ParamineError

__all__ = ["Paramine", "ParamineError", "models"]
