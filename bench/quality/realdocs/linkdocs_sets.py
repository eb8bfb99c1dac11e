"""The sets of the linkdocs corpus (``bench/quality/linkdocs``), chosen by rules.

Built with ``python -m bench.quality.realdocs._build SRC --corpus linkdocs``. Each set
takes every ``.md`` page under its docs folder that its ``include`` patterns match,
that no ``exclude`` pattern matches and that has MIN_WORDS to MAX_WORDS words once
cleaned; the exclusions are release notes, navigation and table-of-contents pages,
plain lists and API stubs (see ``bench/quality/linkdocs/SOURCES.md``).
"""

from __future__ import annotations

from pathlib import Path

from bench.quality.realdocs.realdocs_sets import DocSet

ROOT = Path(__file__).resolve().parent.parent / "linkdocs"

MIN_WORDS = 100
MAX_WORDS = 6000

SETS = (
    DocSet(
        name="npm",
        package="npm",
        version="11.21.2",
        license="Artistic-2.0",
        archive_root="npm-11.21.2/package",
        docs="docs/content",
        pages=(),
        license_file="LICENSE",
        # "[npm install](/commands/npm-install)": the site is served from docs/content
        site_prefixes=("/",),
        raw=True,
    ),
    DocSet(
        name="serverless",
        package="serverless",
        version="3.40.0",
        license="MIT",
        archive_root="serverless-3.40.0/package",
        docs="docs",
        pages=(),
        license_file="LICENSE.txt",
        site_prefixes=("/framework/docs/",),
        # the provider-independent pages and the AWS provider (the other providers'
        # pages are near copies of the AWS ones)
        include=("*.md",),
        exclude=(
            "README.md",  # the docs' table of contents
            "providers/README.md",  # a list of the providers
            "examples-and-tutorials.md",  # a list of links
            "deprecations.md",  # deprecation notes, by version
            "guides/upgrading-v3.md",  # an upgrade checklist
            "guides/dashboard/upgrade-to-v2.md",
            "providers/aws/examples/*",
            "providers/azure/*",
            "providers/google/*",
            "providers/openwhisk/*",
            "providers/tencent/*",
            "providers/knative/*",
            "providers/aliyun/*",
            "providers/kubeless/*",
            "providers/fn/*",
            "providers/cloudflare/*",
            "providers/spotinst/*",
        ),
    ),
    DocSet(
        name="hatch",
        package="hatch",
        version="1.18.2",
        license="MIT",
        archive_root="hatch-1.18.2",
        docs="docs",
        pages=(),
        license_file="LICENSE.txt",
        exclude=(
            "blog/*",  # release announcements
            "history/*",  # changelogs
            "index.md",  # badges and cards
            "next-steps.md",  # a list of links
            "community/users.md",  # a list of users
            "cli/reference.md",  # generated
        ),
    ),
    DocSet(
        name="pymdown-extensions",
        package="pymdown-extensions",
        version="13.1.2",
        license="MIT",
        archive_root="pymdown_extensions-13.1.2",
        docs="docs/src/markdown",
        pages=(),
        license_file="LICENSE.md",
        exclude=(
            ".snippets/*",  # link and abbreviation lists pasted into other pages
            "about/releases/*",  # release notes
            "about/changelog.md",
            "about/license.md",
            "index.md",  # a short overview, then a list linking every extension
        ),
    ),
    DocSet(
        name="undici",
        package="undici",
        version="7.30.2",
        license="MIT",
        archive_root="undici-7.30.2/package",
        docs="docs/docs",
        pages=(),
        license_file="LICENSE",
        # both "/docs/docs/api/Client.md" and "/docs/api/Client.md" name docs/docs/api
        site_prefixes=("/docs/docs/", "/docs/"),
    ),
    DocSet(
        name="fastify",
        package="fastify",
        version="5.12.8",
        license="MIT",
        archive_root="fastify-5.12.8/package",
        docs="docs",
        pages=(),
        banner="Fastify",
        license_file="LICENSE",
        exclude=(
            "index.md",
            "Guides/Index.md",  # tables of contents
            "Reference/Index.md",
            "Guides/Ecosystem.md",  # a plugin list
            "Reference/LTS.md",  # a table
            "Guides/Migration-Guide-*",  # upgrade checklists
        ),
    ),
    DocSet(
        name="python-markdown",
        package="Markdown",
        version="3.11.3",
        license="BSD-3-Clause",
        archive_root="markdown-3.11.3",
        docs="docs",
        pages=(),
        license_file="LICENSE.md",
        exclude=(
            "changelog.md",
            "change_log/*",  # release notes
            "authors.md",  # a list of people
            "playground.md",  # an in-browser editor widget
            "reference/*",  # mkdocstrings stubs
            "templates/*",
        ),
    ),
)
