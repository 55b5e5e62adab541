"""Think-on-Graph search over a graphrag index."""

from gtog.tog._api import tog_search
from gtog.tog._factory import get_tog_search_engine
from gtog.tog._search import ToGSearch
from gtog.tog._settings import ToGSettings, load_tog_settings

__all__ = ["ToGSearch", "ToGSettings", "get_tog_search_engine", "load_tog_settings", "tog_search"]
