"""A website as documents: its pages from its sitemap.xml (or by following same-host links from a start
page), robots.txt honoured, at most max_pages, a politeness delay between requests, each page's main
content extracted by trafilatura (navigation, headers and footers left out), ETag / Last-Modified asked
again so an unchanged page costs a 304. The crawler never requests a URL outside the allowed hosts, not
even through a redirect.

robots.txt is read with the standard library's urllib.robotparser and sitemaps with xml.etree; page
content with trafilatura. A page that answers 404 or 410 (or leaves the sitemap) is gone; one that fails
otherwise keeps what the last sync read (see docs/sources.md).
"""

from __future__ import annotations

import asyncio
import collections
import functools
import time
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urldefrag, urljoin, urlsplit
from urllib.robotparser import RobotFileParser

import aiohttp

from adapters.sources.export_zip import content_version
from core.errors import SourceUnreadable
from core.sources.models import Fetched, SyncedDocument

USER_AGENT = "kb-slack-bot (knowledge-base sync)"
MAX_PAGES = 500
DELAY = 1.0
MAX_REDIRECTS = 5
MAX_PAGE_BYTES = 10 * 1024 * 1024
GONE = frozenset({404, 410})
_SITEMAP = "{http://www.sitemaps.org/schemas/sitemap/0.9}"


def page_key(url: str) -> str:
    """A page's key: its URL without fragment."""
    return urldefrag(url)[0]


def allowed(url: str, hosts: frozenset[str]) -> bool:
    """An http(s) URL on one of the allowed hosts (host and port as written)."""
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and parts.netloc.lower() in hosts


def sitemap_locations(xml: bytes) -> tuple[list[str], list[str]]:
    """(page URLs, nested sitemap URLs) of a sitemap or sitemap index; ([], []) for anything else."""
    try:
        root = ElementTree.fromstring(xml)
    except ElementTree.ParseError:
        return [], []
    locations = [node.text.strip() for node in root.iter(f"{_SITEMAP}loc") if node.text and node.text.strip()]
    if root.tag == f"{_SITEMAP}sitemapindex":
        return [], locations
    return locations, []


def page_links(html: str, base: str) -> list[str]:
    """The page's links as absolute URLs without fragments, in order."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    return [page_key(urljoin(base, str(a["href"]))) for a in soup.find_all("a", href=True)]


def page_document(url: str, html: str, validators: str = "|") -> SyncedDocument | None:
    """The page's main content as Markdown under its title (None when it has no main text); its version
    is "ETag|Last-Modified|content hash" (validators: the first two, as the server sent them)."""
    import trafilatura

    extract = functools.partial(
        trafilatura.extract, url=url, output_format="markdown", include_links=True, include_tables=True
    )
    # Precision first: boilerplate repeated on every page (a site header, a footer) would match every
    # search; a page it leaves empty is read again with trafilatura's balanced default.
    markdown = extract(html, favor_precision=True) or extract(html)
    if not markdown or not markdown.strip():
        return None
    metadata = trafilatura.extract_metadata(html, default_url=url)
    title = (metadata.title if metadata and metadata.title else "") or url
    body = markdown.strip()
    if not body.startswith("# "):
        body = f"# {title}\n\n{body}"
    return SyncedDocument(page_key(url), title, body, url, f"{validators}|{content_version(body)}")


@dataclass
class _Crawl:
    documents: list[SyncedDocument] = field(default_factory=list)
    kept: set[str] = field(default_factory=set)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)


class WebsiteFetcher:
    """SourceFetcher over one site, from its sitemap (url ends in .xml) or by links from a start page."""

    def __init__(
        self,
        url: str,
        *,
        hosts: Iterable[str] = (),
        max_pages: int = MAX_PAGES,
        delay: float = DELAY,
        session: aiohttp.ClientSession | None = None,
    ) -> None:
        self.url = url
        self.hosts = frozenset(h.lower() for h in hosts) or frozenset({urlsplit(url).netloc.lower()})
        self.max_pages = max_pages
        self.delay = delay
        self._session = session
        self._last = 0.0

    async def fetch(self, known: Mapping[str, str]) -> Fetched:
        try:
            if self._session is not None:
                return await self._fetch(self._session, known)
            timeout = aiohttp.ClientTimeout(total=60)
            async with aiohttp.ClientSession(timeout=timeout, headers={"User-Agent": USER_AGENT}) as session:
                return await self._fetch(session, known)
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise SourceUnreadable(self.url, f"the site could not be reached ({type(exc).__name__})") from exc

    async def _pause(self) -> None:
        wait = self._last + self.delay - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
        self._last = time.monotonic()

    async def _get(
        self, session: aiohttp.ClientSession, url: str, headers: Mapping[str, str] | None = None
    ) -> tuple[str, int, Mapping[str, str], bytes]:
        """(final URL, status, headers, body) following redirects only within the allowed hosts; status 0
        when a redirect leads off the site."""
        for _ in range(MAX_REDIRECTS + 1):
            await self._pause()
            async with session.get(url, headers=dict(headers or {}), allow_redirects=False) as response:
                if response.status in (301, 302, 303, 307, 308) and "Location" in response.headers:
                    target = page_key(urljoin(url, response.headers["Location"]))
                    if not allowed(target, self.hosts):
                        return url, 0, {}, b""
                    url = target
                    continue
                body = await response.content.read(MAX_PAGE_BYTES)
                return url, response.status, response.headers.copy(), body
        return url, 0, {}, b""

    async def _robots(self, session: aiohttp.ClientSession) -> RobotFileParser:
        parts = urlsplit(self.url)
        robots = RobotFileParser()
        _, status, _, body = await self._get(session, f"{parts.scheme}://{parts.netloc}/robots.txt")
        if status >= 500 or status == 0:
            raise SourceUnreadable(self.url, f"robots.txt answered HTTP {status}")
        robots.parse(body.decode("utf-8", errors="replace").splitlines() if status == 200 else [])
        delay = robots.crawl_delay(USER_AGENT)
        if delay:
            self.delay = max(self.delay, float(delay))
        return robots

    async def _sitemap(self, session: aiohttp.ClientSession) -> list[str]:
        pages: list[str] = []
        pending, read = collections.deque([self.url]), 0
        while pending and read < 20:
            sitemap = pending.popleft()
            read += 1
            if not allowed(sitemap, self.hosts):
                continue
            _, status, _, body = await self._get(session, sitemap)
            if status != 200:
                raise SourceUnreadable(sitemap, f"the sitemap answered HTTP {status}")
            found, nested = sitemap_locations(body)
            pages.extend(found)
            pending.extend(nested)
        return list(dict.fromkeys(page_key(url) for url in pages))

    async def _fetch(self, session: aiohttp.ClientSession, known: Mapping[str, str]) -> Fetched:
        robots = await self._robots(session)
        by_sitemap = urlsplit(self.url).path.lower().endswith(".xml")
        queue = collections.deque(await self._sitemap(session) if by_sitemap else [page_key(self.url)])
        crawl = _Crawl()
        while queue and len(crawl.seen) < self.max_pages:
            url = queue.popleft()
            if url in crawl.seen:
                continue
            crawl.seen.add(url)
            if not allowed(url, self.hosts):
                crawl.skipped.append((url, "outside the allowed hosts"))
                continue
            if not robots.can_fetch(USER_AGENT, url):
                crawl.skipped.append((url, "disallowed by robots.txt"))
                continue
            links = await self._page(session, url, known.get(url, ""), crawl, conditional=by_sitemap)
            queue.extend(link for link in links if allowed(link, self.hosts) and link not in crawl.seen)
        if queue:
            crawl.skipped.append(
                (self.url, f"stopped at the page limit ({self.max_pages}); {len(queue)} left")
            )
            crawl.kept.update(url for url in known if url in queue)  # not read this time: not gone either
        return Fetched(tuple(crawl.documents), frozenset(crawl.kept), tuple(crawl.skipped))

    async def _page(
        self, session: aiohttp.ClientSession, url: str, version: str, crawl: _Crawl, *, conditional: bool
    ) -> list[str]:
        """Read one page into the crawl; returns its links (for following them when crawling)."""
        etag, modified, *_ = [*version.split("|"), "", ""]
        headers = {}
        if conditional and etag:
            headers["If-None-Match"] = etag
        if conditional and modified:
            headers["If-Modified-Since"] = modified
        try:
            final, status, answer, body = await self._get(session, url, headers)
        except (aiohttp.ClientError, TimeoutError) as exc:
            status, final, answer, body = -1, url, {}, str(exc).encode()
        if status == 304:
            crawl.kept.add(url)
            return []
        if status in GONE:
            return []
        if status != 200:
            reason = "redirects off the site" if status == 0 else f"HTTP {status}"
            if version:
                crawl.kept.add(url)  # a failure is not a deletion: the last sync's copy stays
                reason += ", kept from the last sync"
            crawl.skipped.append((url, reason))
            return []
        kind = answer.get("Content-Type", "text/html").split(";", 1)[0].strip().lower()
        if kind not in ("text/html", "application/xhtml+xml"):
            crawl.skipped.append((url, f"not an HTML page ({kind})"))
            return []
        html = body.decode("utf-8", errors="replace")
        validators = f"{answer.get('ETag', '')}|{answer.get('Last-Modified', '')}"
        document = await asyncio.to_thread(page_document, url, html, validators)
        if document is None:
            crawl.skipped.append((url, "no main text"))
        else:
            crawl.documents.append(document)
        return await asyncio.to_thread(page_links, html, final)
