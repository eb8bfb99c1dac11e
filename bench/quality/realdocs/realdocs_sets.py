"""The sets of the realdocs corpus (``bench/quality/realdocs``), page by page, and
:class:`DocSet`, which both corpora's set lists are made of.

Built with ``python -m bench.quality.realdocs._build SRC``; the selection is explained
in ``bench/quality/realdocs/SOURCES.md``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DocSet:
    name: str
    package: str
    version: str
    license: str
    archive_root: str  # folder of the unpacked archive, relative to SRC
    docs: str  # docs folder inside it
    pages: tuple[str, ...]  # original paths, relative to the docs folder
    banner: str = ""  # an HTML <h1> on every page that is the site's name, not a title
    # site-absolute link prefixes that stand for the docs folder (see resolve_target)
    site_prefixes: tuple[str, ...] = ()
    # with no ``pages``: every ``.md`` under the docs folder matching ``include`` and no
    # ``exclude`` (fnmatch on the original path), of MIN_WORDS to MAX_WORDS words
    include: tuple[str, ...] = ("*.md",)
    exclude: tuple[str, ...] = ()
    license_file: str = ""  # in the archive root; copied to licenses/ (linkdocs)
    # the pages exactly as published: no cleaning at all, front matter kept (npm's pages
    # have their title and lead only in front matter, as many sites' pages do)
    raw: bool = False

    @property
    def docs_in_archive(self) -> str:
        return f"{self.archive_root}/{self.docs}"


SETS = (
    DocSet(
        name="hatch",
        package="hatch",
        version="1.18.2",
        license="MIT",
        archive_root="hatch-1.18.2",
        docs="docs",
        pages=(
            "intro.md",
            "why.md",
            "environment.md",
            "build.md",
            "tutorials/environment/basic-usage.md",
            "tutorials/python/manage.md",
            "tutorials/testing/overview.md",
            "config/metadata.md",
            "config/dependency.md",
            "config/build.md",
            "config/hatch.md",
            "config/context.md",
            "config/environment/overview.md",
            "config/environment/advanced.md",
            "config/environment/sources.md",
            "config/internal/testing.md",
            "config/internal/static-analysis.md",
            "how-to/environment/select-installer.md",
            "how-to/environment/lockfiles.md",
            "how-to/run/python-scripts.md",
            "plugins/about.md",
            "plugins/locker.md",
            "plugins/builder/wheel.md",
            "plugins/builder/sdist.md",
            "plugins/environment/virtual.md",
        ),
    ),
    DocSet(
        name="python-markdown",
        package="Markdown",
        version="3.11.3",
        license="BSD-3-Clause",
        archive_root="markdown-3.11.3",
        docs="docs",
        pages=(
            "index.md",
            "library.md",
            "cli.md",
            "sanitization.md",
            "test_tools.md",
            "extensions/index.md",
            "extensions/extra.md",
            "extensions/abbreviations.md",
            "extensions/attr_list.md",
            "extensions/definition_lists.md",
            "extensions/fenced_code_blocks.md",
            "extensions/footnotes.md",
            "extensions/md_in_html.md",
            "extensions/tables.md",
            "extensions/admonition.md",
            "extensions/code_hilite.md",
            "extensions/legacy_attrs.md",
            "extensions/legacy_em.md",
            "extensions/meta_data.md",
            "extensions/nl2br.md",
            "extensions/sane_lists.md",
            "extensions/smarty.md",
            "extensions/toc.md",
            "extensions/wikilinks.md",
        ),
    ),
    DocSet(
        name="fastify",
        package="fastify",
        version="5.12.8",
        license="MIT",
        archive_root="fastify-5.12.8/package",
        docs="docs",
        pages=(
            "Guides/Getting-Started.md",
            "Guides/Plugins-Guide.md",
            "Guides/Write-Plugin.md",
            "Guides/Write-Type-Provider.md",
            "Guides/Database.md",
            "Guides/Testing.md",
            "Guides/Serverless.md",
            "Guides/Recommendations.md",
            "Guides/Style-Guide.md",
            "Guides/Delay-Accepting-Requests.md",
            "Guides/Detecting-When-Clients-Abort.md",
            "Reference/Encapsulation.md",
            "Reference/Plugins.md",
            "Reference/Decorators.md",
            "Reference/Request.md",
            "Reference/Lifecycle.md",
            "Reference/Middleware.md",
            "Reference/Logging.md",
            "Reference/ContentTypeParser.md",
            "Reference/Type-Providers.md",
            "Reference/Principles.md",
        ),
        banner="Fastify",
    ),
)

MIN_WORDS = 150
MAX_WORDS = 3000
