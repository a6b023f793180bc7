"""The HTTP API every desk uses (``/api/v1``, OpenAPI at ``/api/openapi.json``).

Handlers are thin: they authenticate (:mod:`.auth`), check the one permission table
(:mod:`gateway.accounts.roles`), validate the body with bounded pydantic models
(:mod:`.models`) and call the same services as the CLI (:mod:`.actions`).  No rule lives
here; a refusal is the service's own words as JSON (:mod:`.errors`).
"""

from gateway.web.api.app import create_app

__all__ = ["create_app"]
