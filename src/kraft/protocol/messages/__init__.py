"""One module per API, each declaring ``API``; ``REGISTRY`` maps api key -> Api."""

from kraft.protocol.api import Api
from kraft.protocol.messages import vote

REGISTRY: dict[int, Api] = {m.API.key: m.API for m in (vote,)}
