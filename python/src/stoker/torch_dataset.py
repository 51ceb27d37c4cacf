"""A torch IterableDataset over stoker.Loader: the second choice, for code that insists on a
torch DataLoader. Use it with DataLoader(dataset, batch_size=None, num_workers=0): the batches
are already built, and the parallelism is inside stoker (worker processes would each run a whole
loader and duplicate the data)."""

from __future__ import annotations

from typing import Any, Dict, Iterator

import torch.utils.data

from ._loader import Loader


class TorchIterableDataset(torch.utils.data.IterableDataset):
    """Yields the loader's batches (dicts of tensors); one pass = one epoch of the loader."""

    def __init__(self, loader: Loader) -> None:
        super().__init__()
        if not isinstance(loader, Loader):
            raise TypeError("TorchIterableDataset wraps a stoker.Loader")
        self.loader = loader

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        if torch.utils.data.get_worker_info() is not None:
            raise RuntimeError(
                "stoker.TorchIterableDataset must run with DataLoader(num_workers=0): stoker "
                "already loads with its own threads, and worker processes would repeat the data")
        return iter(self.loader)

    def __len__(self) -> int:
        return len(self.loader)

    def set_epoch(self, epoch: int) -> None:
        self.loader.set_epoch(epoch)

    def state_dict(self) -> Dict[str, Any]:
        # With the run record (docs/lineage.md): a trainer's checkpoint is enough for stoker trace.
        return self.loader.state_dict(run_record=True)

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        self.loader.load_state_dict(state)
