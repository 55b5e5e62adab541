"""Think-on-Graph search over a graphrag index."""

from gtog.tog.api import tog_search
from gtog.tog.factory import get_tog_search_engine
from gtog.tog.search import ToGSearch
from gtog.tog.settings import ToGSettings, load_tog_settings

__all__ = ["ToGSearch", "ToGSettings", "get_tog_search_engine", "load_tog_settings", "tog_search"]
