"""`kb sources` over a website served on this machine (aiohttp), as subprocesses: pages from the sitemap,
robots.txt honoured, main content only, an ETag answered with 304 on the next sync, a removed page gone,
and no request ever made to a host outside the site."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from aiohttp import web

from tests.cli.cli_support import clean_env
from tests.sources.test_slack_channel_sync import kb_async

PAGE = """<html><head><title>{title}</title></head><body>
<nav><a href="/">Home</a> <a href="/vpn.html">VPN</a> <a href="{elsewhere}">Partner site</a></nav>
<header><p>ACME IT help — internal site</p></header>
<main><article><h1>{title}</h1>{body}</article></main>
<footer><p>© 2026 ACME Corp · Privacy policy · Cookie settings</p></footer></body></html>"""


@dataclass
class Site:
    """A small intranet site, with what it was asked."""

    elsewhere: str = ""
    with_printers: bool = True
    requests: list[tuple[str, str]] = field(default_factory=list)  # (path, If-None-Match)

    def page(self, title: str, body: str) -> str:
        return PAGE.format(title=title, body=body, elsewhere=self.elsewhere)

    async def handle(self, request: web.Request) -> web.Response:
        self.requests.append((request.path, request.headers.get("If-None-Match", "")))
        base = f"http://{request.host}"
        if request.path == "/robots.txt":
            return web.Response(text="User-agent: *\nDisallow: /private/\n")
        if request.path == "/sitemap.xml":
            paths = ["/", "/vpn.html", "/private/salaries.html"] + (
                ["/printers.html"] if self.with_printers else []
            )
            urls = "".join(f"<url><loc>{base}{path}</loc></url>" for path in paths)
            urls += f"<url><loc>{self.elsewhere}</loc></url>"  # a foreign URL in the sitemap is never fetched
            xml = f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'
            return web.Response(text=xml, content_type="application/xml")
        if request.path == "/vpn.html":
            if request.headers.get("If-None-Match") == '"v1"':
                return web.Response(status=304, headers={"ETag": '"v1"'})
            body = "<p>Request VPN access in the IT portal under Network, then install the GlobalProtect client and sign in with your badge number.</p>"
            return web.Response(
                text=self.page("VPN access", body), content_type="text/html", headers={"ETag": '"v1"'}
            )
        if request.path == "/printers.html" and self.with_printers:
            body = "<p>The printer on floor 2 is the HP 4410; add it as print01 from the Settings app.</p>"
            return web.Response(text=self.page("Printers", body), content_type="text/html")
        if request.path == "/":
            body = "<p>Welcome to the IT help site. Ask the service desk at extension 4400 for anything else.</p>"
            return web.Response(text=self.page("IT help", body), content_type="text/html")
        return web.Response(status=404, text="not found")


async def _serve(site: Site) -> tuple[web.AppRunner, str]:
    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", site.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    server = web.TCPSite(runner, "127.0.0.1", 0)
    await server.start()
    return runner, f"http://127.0.0.1:{server._server.sockets[0].getsockname()[1]}"  # type: ignore[union-attr]


@pytest.fixture
async def sites() -> AsyncIterator[tuple[Site, str, Site]]:
    """The intranet site and another host (another port: another origin) it links to."""
    other = Site()
    other_runner, other_url = await _serve(other)
    site = Site(elsewhere=f"{other_url}/evil.html")
    runner, url = await _serve(site)
    try:
        yield site, url, other
    finally:
        await runner.cleanup()
        await other_runner.cleanup()


async def test_a_site_syncs_from_its_sitemap_politely_and_follows_its_changes(
    sites: tuple[Site, str, Site], tmp_path: Path
) -> None:
    """Three pages (robots.txt keeps out the fourth), their main content only, cited by URL; the next sync
    asks with the ETag and gets 304, and the page removed from the site is removed from the dataset."""
    site, url, other = sites
    env = clean_env(tmp_path / "home")
    code, _, err = await kb_async(
        env,
        "sources",
        "add",
        "intranet",
        "--kind",
        "website",
        "--url",
        f"{url}/sitemap.xml",
        "--dataset",
        "web",
        "--set",
        "delay=0",
    )
    assert code == 0, err
    code, out, err = await kb_async(env, "sources", "sync", "intranet")
    assert code == 0, err
    assert "documents: 3 new, 0 changed, 0 unchanged, 0 removed, 2 skipped" in out, out
    assert "disallowed by robots.txt" in out and "outside the allowed hosts" in out
    assert "/private/salaries.html" not in [path for path, _ in site.requests]
    code, out, err = await kb_async(env, "ask", "how do I get VPN access?", "--dataset", "web", "--json")
    record = json.loads(out)
    assert "GlobalProtect" in record["answer"]
    assert f"{url}/vpn.html" in [c["source"] for c in record["details"]["citations"]]
    code, out, err = await kb_async(
        env, "search", "Privacy policy Cookie settings internal site", "--dataset", "web", "--json"
    )
    assert not any(
        "Cookie" in hit["content"] or "internal site" in hit["content"] for hit in json.loads(out)["hits"]
    )

    site.with_printers = False
    site.requests.clear()
    code, out, err = await kb_async(env, "sources", "sync", "intranet")
    assert "documents: 0 new, 0 changed, 2 unchanged, 1 removed" in out, out
    assert ("/vpn.html", '"v1"') in site.requests  # asked with its ETag, answered 304
    code, out, err = await kb_async(env, "docs", "list", "--dataset", "web", "--json")
    assert sorted(doc["name"] for doc in json.loads(out)) == ["IT help", "VPN access"]
    assert other.requests == []  # the crawler never left the site


async def test_a_site_that_cannot_be_reached_changes_nothing(tmp_path: Path) -> None:
    """A sync of an unreachable site fails with one line, exit 1; a bad address is refused when added."""
    env = clean_env(tmp_path / "home")
    code, _, err = await kb_async(
        env, "sources", "add", "x", "--kind", "website", "--url", "ftp://x/", "--dataset", "w"
    )
    assert code == 2 and "http:// or https://" in err
    await kb_async(
        env,
        "sources",
        "add",
        "gone",
        "--kind",
        "website",
        "--url",
        "http://127.0.0.1:9/sitemap.xml",
        "--dataset",
        "w",
    )
    code, out, err = await kb_async(env, "sources", "sync", "gone")
    assert code == 1 and "could not be reached" in out and "Traceback" not in out + err


async def test_a_site_without_a_sitemap_is_read_by_its_links_within_the_page_limit(
    sites: tuple[Site, str, Site], tmp_path: Path
) -> None:
    """From a start page, same-host links are followed (the partner site's is not), up to max_pages."""
    site, url, other = sites
    env = clean_env(tmp_path / "home")
    await kb_async(
        env,
        "sources",
        "add",
        "crawl",
        "--kind",
        "website",
        "--url",
        f"{url}/",
        "--dataset",
        "web",
        "--set",
        "delay=0",
        "--set",
        "max_pages=3",
    )
    code, out, err = await kb_async(env, "sources", "sync", "crawl")
    assert code == 0 and "documents: 2 new" in out, out + err  # links off the site are not followed
    assert {path for path, _ in site.requests} == {"/robots.txt", "/", "/vpn.html"} and other.requests == []
