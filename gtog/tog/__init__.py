"""Think-on-Graph search over a graphrag index.

Its names load on first use (`gtog._lazy`): ToG's settings are read by commands that never
search (a finished run, `--plan`), which must not wait for graphrag's query engines.
"""

from gtog._lazy import lazy_exports

__all__ = ["ToGSearch", "ToGSettings", "get_tog_search_engine", "load_tog_settings", "tog_search"]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "tog_search": "gtog.tog._api",
        "get_tog_search_engine": "gtog.tog._factory",
        "ToGSearch": "gtog.tog._search",
        "ToGSettings": "gtog.tog._settings",
        "load_tog_settings": "gtog.tog._settings",
    },
)
