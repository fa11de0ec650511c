"""ai-loom on `code3 serve`'s app (in process): the REST twins mounted under /api behind the serve token,
sharing the tools' Runtime; the server settings the handlers read (CODE3_LOOM_SHARE_INTERNAL, the sealer
with the project's secrets in CODE3_HOME)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from adapters.keystore import Keystore
from adapters.secret_box import KEY_FILE, SecretBox
from code3.settings import VARIABLES, Settings
from code3.wiring import build_services
from mcp_tools.ai_loom.rest import Unauthorized
from mcp_tools.http.app import build_app
from mcp_tools.services import Services
from tests.answers import error_of
from tests.integration.test_ai_loom_tools import SECRET, SOURCE, call, ok

TOKEN = "a-serve-token-for-the-tests-0123"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def project(root: Path) -> Path:
    Keystore(Settings(project=root).keystore_dir).new("alice")
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text(SOURCE)
    return root


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[TestClient, list[Services]]]:
    settings = Settings(project=project(tmp_path), identity="alice")
    built: list[Services] = []

    def factory() -> Services:
        built.append(build_services(settings))
        return built[-1]

    with TestClient(build_app(factory, b"webhook-secret", token=TOKEN.encode()),
                    base_url="http://127.0.0.1:8765") as client:  # serve answers loopback Host headers only
        yield client, built
    for s in built:
        s.close()


ROUTES = [("GET", "/api/annotations", None), ("POST", "/api/annotations", {"filePath": "src/app.py", "startLine": 1,
                                                                          "endLine": 1, "comment": "c"}),
          ("GET", "/api/annotations/ann_00000000000000000000000000", None),
          ("PATCH", "/api/annotations/ann_00000000000000000000000000", {"priority": "P0"}),
          ("DELETE", "/api/annotations/ann_00000000000000000000000000", None),
          ("POST", "/api/stitch", {}), ("GET", "/api/openapi.json", None), ("GET", "/api/docs", None)]


def test_every_api_route_needs_the_serve_token(served: tuple[TestClient, list[Services]]) -> None:
    client, built = served
    for method, path, body in ROUTES:
        for headers in ({}, {"Authorization": "Bearer wrong-token-wrong-token"}, {"Authorization": f"Basic {TOKEN}"}):
            refused = client.request(method, path, json=body, headers=headers)
            assert refused.status_code == 401, (method, path, headers)
            assert refused.headers["www-authenticate"].startswith('Bearer realm="code3"')
    assert not built, "a refused request builds no services and reads nothing"
    for method, path, body in ROUTES:
        answer = client.request(method, path, json=body, headers=AUTH)
        assert answer.status_code in (200, 201, 404), (method, path, answer.text)


def test_the_api_is_the_rest_twins_with_their_openapi_and_docs_under_api(
        served: tuple[TestClient, list[Services]]) -> None:
    client, built = served
    spec = client.get("/api/openapi.json", headers=AUTH).json()
    assert set(spec["paths"]) == {"/annotations", "/annotations/{annotation_id}", "/stitch"}
    assert spec["servers"] == [{"url": "/api"}], "clients generated from it call /api/…"
    assert spec["components"]["securitySchemes"]["serveToken"] == {
        "type": "http", "scheme": "bearer", "description": "the serve token: `code3 serve --print-token`, or "
                                                          "CODE3_SERVE_TOKEN"}
    operations = [op for path in spec["paths"].values() for op in path.values()]
    assert len(operations) == 6 and all(op["security"] == [{"serveToken": []}] and "401" in op["responses"]
                                        for op in operations), "the token is in the description, with its 401"
    refused = client.get("/api/annotations")
    assert Unauthorized.model_validate(refused.json()), "the 401 the front answers is the one described"
    docs = client.get("/api/docs", headers=AUTH)
    assert docs.status_code == 200 and "/api/openapi.json" in docs.text
    made = client.post("/api/annotations", headers=AUTH, json={"filePath": "src/app.py", "startLine": 2,
                                                                "endLine": 3, "comment": "over /api"})
    assert made.status_code == 201
    assert [i["id"] for i in client.get("/api/annotations", headers=AUTH).json()["items"]] == [made.json()["id"]]
    assert client.post("/api/stitch", headers=AUTH, json={}).json()["stats"]["annotations"] == 1
    assert len(built) == 1, "the routes run on the server's one Runtime (services built once)"
    assert client.get("/api/nothing", headers=AUTH).status_code == 404


def test_internal_annotations_are_shared_only_when_the_server_says_so(tmp_path: Path) -> None:
    assert Settings.from_env({}, project=tmp_path).loom_share_internal is False
    for value, shared in (("1", True), ("true", True), ("ON", True), ("yes", True), ("0", False), ("no", False),
                          ("", False)):
        assert Settings.from_env({"CODE3_LOOM_SHARE_INTERNAL": value}, project=tmp_path).loom_share_internal is shared
    assert "CODE3_LOOM_SHARE_INTERNAL" in VARIABLES
    root = project(tmp_path)
    for share in (False, True):
        s = build_services(Settings.from_env({"CODE3_LOOM_SHARE_INTERNAL": "1" if share else "0"}, project=root,
                                             identity="alice"))
        try:
            assert s.loom_share_internal is share
            made = ok(call(s, "ai-loom.annotate", {"filePath": "src/app.py", "startLine": 4, "endLine": 4,
                                                  "comment": "team-only note", "sensitivity": "internal",
                                                  "clientKey": "internal-1"}))
            got = ok(call(s, "ai-loom.get_context", {"id": made["id"]}, profile="ai-loom"))
            listed = ok(call(s, "ai-loom.list_contexts", {}, profile="ai-loom"))["items"][0]
            stitched = ok(call(s, "ai-loom.stitch", {}, profile="ai-loom"))
            assert got["comment"] == listed["comment"] == ("team-only note" if share else None)
            assert ("team-only note" in stitched["prompt"]) is share
        finally:
            s.close()


def test_the_sealer_lives_with_the_projects_secrets_in_code3_home(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    home = tmp_path / "elsewhere"
    settings = Settings.from_env({"CODE3_HOME": str(home)}, project=root, identity="alice")
    keys = settings.secrets_dir
    s = build_services(settings)
    try:
        assert isinstance(s.sealer, SecretBox) and s.sealer.path == keys / KEY_FILE
        assert keys.is_relative_to(home) and not keys.is_relative_to(root)
        (root / "src" / "db.py").write_text(f"PASSWORD = '{SECRET}'\n")
        made = ok(call(s, "ai-loom.annotate", {"filePath": "src/db.py", "startLine": 1, "endLine": 1,
                                              "comment": f"rotate {SECRET}", "sensitivity": "secret"}))
        assert (keys / KEY_FILE).exists() and not (root / ".code3" / "keys" / KEY_FILE).exists()
        assert made["comment"] is None and SECRET not in json.dumps(made)
    finally:
        s.close()


def test_an_id_or_tag_with_a_trailing_newline_is_a_validation_error_not_internal(tmp_path: Path) -> None:
    s = build_services(Settings(project=project(tmp_path), identity="alice"))
    try:
        answer = call(s, "ai-loom.get_context", {"id": "ann_01M83NBMTG5DH0KMZKJHRSNKE6\n"}, profile="ai-loom")
        assert error_of(answer)["code"] == "VALIDATION_ERROR"
        tagged = call(s, "ai-loom.annotate", {"filePath": "src/app.py", "startLine": 1, "endLine": 1,
                                              "comment": "c", "tags": ["perf\n"]})
        assert error_of(tagged)["code"] == "VALIDATION_ERROR"
    finally:
        s.close()
