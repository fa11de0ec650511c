"""The ai-loom REST twins (`code3 serve` mounts them under /api): the same handlers as the MCP tools, the
OpenAPI description generated from the same models by FastAPI (none written by hand).

GET/POST /annotations, GET/PATCH/DELETE /annotations/{id}, POST /stitch. Errors answer the seed's codes
with an HTTP status: NOT_FOUND 404, VALIDATION_ERROR 422, INTERNAL 500. Every answer is capped at 256 KB.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import HTTPBearer
from pydantic import BaseModel, ConfigDict, Field

from mcp_tools.ai_loom import tools as loom
from mcp_tools.ai_loom.answers import AnnotationView, DeleteAnswer, ListAnswer, StitchAnswer
from mcp_tools.ai_loom.errors import HTTP_STATUS, LoomError


class ErrorBody(BaseModel):
    code: Literal["NOT_FOUND", "VALIDATION_ERROR", "INTERNAL"]
    message: str
    hint: str


class Unauthorized(BaseModel):
    """What `code3 serve` answers (401, `WWW-Authenticate: Bearer`) before a route runs without the token."""

    error: Literal["unauthorized"]
    message: str


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class AnnotateBody(_Body):
    filePath: str = Field(max_length=1024)
    startLine: int = Field(ge=1)
    endLine: int = Field(ge=1)
    comment: str = Field(max_length=4000)
    tags: list[str] | None = Field(default=None, max_length=16)
    priority: Literal["P0", "P1", "P2"] = "P1"
    sensitivity: Literal["public", "internal", "secret"] = "public"
    clientKey: str | None = Field(default=None, max_length=128)


class EditBody(_Body):
    comment: str | None = Field(default=None, max_length=4000)
    tags: list[str] | None = Field(default=None, max_length=16)
    priority: Literal["P0", "P1", "P2"] | None = None
    sensitivity: Literal["public", "internal", "secret"] | None = Field(
        default=None, description="only rises: public < internal < secret (a lowering is refused with "
                                  "VALIDATION_ERROR; the owner lowers one with `code3 loom lower`)")
    startLine: int | None = Field(default=None, ge=1)
    endLine: int | None = Field(default=None, ge=1)


class StitchBody(_Body):
    templateId: Literal["concise", "detailed"] | None = None
    annotationIds: list[str] | None = Field(default=None, max_length=10_000)
    maxChars: int | None = Field(default=None, ge=200, le=200_000)


ERRORS: dict[int | str, dict[str, Any]] = {401: {"model": Unauthorized, "description": "no serve token, or another"},
                                           404: {"model": ErrorBody}, 422: {"model": ErrorBody},
                                           500: {"model": ErrorBody}}
# Declares the serve token in the OpenAPI description (a bearer scheme on every route). `code3 serve`'s front
# (mcp_tools.http.gate.Front) checks it before a route runs; this dependency only reads the header, never refuses.
BEARER = HTTPBearer(auto_error=False, scheme_name="serveToken",
                    description="the serve token: `code3 serve --print-token`, or CODE3_SERVE_TOKEN")


def build_rest(run: Callable[[Callable[[Any], Any]], Any]) -> FastAPI:
    """`run(fn)` runs `fn(services)` with the services the tools use (mcp_tools.binding.Runtime.run)."""
    app = FastAPI(title="Code3 ai-loom", version="1.0.0", summary="Annotations stitched into prompts",
                  responses=ERRORS, dependencies=[Depends(BEARER)])

    @app.exception_handler(LoomError)
    async def loom_error(request: Request, exc: LoomError) -> JSONResponse:
        return JSONResponse(exc.as_dict(), status_code=HTTP_STATUS[exc.loom_code])

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()))
        return JSONResponse({"code": "VALIDATION_ERROR", "message": f"{where}: {first.get('msg', 'invalid')}",
                             "hint": "see the OpenAPI description (/api/openapi.json) for each field"},
                            status_code=422)

    @app.exception_handler(Exception)
    async def internal(request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse({"code": "INTERNAL", "message": "internal error; the server log has details",
                             "hint": "retry; if it persists, report it with the server log"}, status_code=500)

    @app.get("/annotations", response_model=ListAnswer, operation_id="listAnnotations")
    def list_annotations(limit: int = Query(50, ge=1, le=loom.MAX_PAGE),
                         offset: int = Query(0, ge=0, le=10**9)) -> Any:
        return run(lambda s: loom.list_contexts(s, limit=limit, offset=offset))

    @app.post("/annotations", response_model=AnnotationView, status_code=201, operation_id="createAnnotation")
    def create_annotation(body: AnnotateBody) -> Any:
        return run(lambda s: loom.annotate(s, **body.model_dump()))

    @app.get("/annotations/{annotation_id}", response_model=AnnotationView, operation_id="getAnnotation")
    def get_annotation(annotation_id: str) -> Any:
        return run(lambda s: loom.get_context(s, id=annotation_id))

    @app.patch("/annotations/{annotation_id}", response_model=AnnotationView, operation_id="editAnnotation")
    def edit_annotation(annotation_id: str, body: EditBody) -> Any:
        return run(lambda s: loom.edit(s, id=annotation_id, **body.model_dump()))

    @app.delete("/annotations/{annotation_id}", response_model=DeleteAnswer, operation_id="deleteAnnotation")
    def delete_annotation(annotation_id: str) -> Any:
        return run(lambda s: loom.delete(s, id=annotation_id))

    @app.post("/stitch", response_model=StitchAnswer, operation_id="stitch")
    def stitch(body: StitchBody) -> Any:
        return run(lambda s: loom.stitch_contexts(s, **body.model_dump()))

    return app
