"""Classes chosen by name in configs: the one registry kind that transition policies
(``policy_registry.py``) and compositions (``compositions/registry.py``) are each an instance
of. A name is taken once; a class registered under it must be of the registry's kind."""

from typing import Callable, Dict, Generic, List, Type, TypeVar

T = TypeVar("T")


class NameRegistry(Generic[T]):
    """Subclasses of ``base`` by name. ``kind`` names what they are, in messages ("policy")."""

    def __init__(self, kind: str, base: Type[T]) -> None:
        self.kind = kind
        self.base = base
        self.classes: Dict[str, Type[T]] = {}

    def register(self, name: str) -> Callable[[Type[T]], Type[T]]:
        """A class decorator: the class is chosen in configs by ``name``."""

        def add(cls: Type[T]) -> Type[T]:
            if not (isinstance(cls, type) and issubclass(cls, self.base)):
                raise TypeError(
                    f"register_{self.kind}({name!r}) decorates a {self.base.__name__} subclass"
                )
            existing = self.classes.get(name)
            if existing is not None and existing is not cls:
                raise ValueError(
                    f"the {self.kind} name {name!r} is taken by {existing.__module__}."
                    f"{existing.__qualname__}: choose another"
                )
            self.classes[name] = cls
            return cls

        return add

    def names(self) -> List[str]:
        return sorted(self.classes)
