"""Think-on-Graph search over a graphrag index.

Its names load on first use (`gtog._lazy`): ToG's settings are read by commands that never
search (a finished run, `--plan`), which must not wait for graphrag's query engines.
"""

from typing import TYPE_CHECKING

from gtog._lazy import lazy_exports

if TYPE_CHECKING:  # what the API reference reads; at run time each loads on first use
    from gtog.tog._api import tog_search
    from gtog.tog._factory import get_tog_search_engine
    from gtog.tog._search import ToGSearch
    from gtog.tog._settings import ToGSettings, load_tog_settings

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
