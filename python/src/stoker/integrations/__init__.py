"""Drop-in adapters from stoker.Loader to the trainers people run (docs/integrations.md).

One thin module per framework; importing this package, or ``stoker``, imports none of them:

- ``hf``: ``StokerTrainer``, a transformers ``Trainer`` (and, through ``StokerTrainerMixin``,
  TRL's trainers: ``StokerSFTTrainer``) fed by a loader, with exact resume from its checkpoints;
- ``lightning``: a stateful loader that Lightning and Fabric checkpoint, and a LitGPT
  ``DataModule``;
- ``torchtitan``: a ``BaseDataLoader`` with its ``Config``;
- ``megatron``: a dataset ``BlendedMegatronDatasetBuilder`` builds, and an external iterator;
- ``olmo_core``: a ``DataLoaderBase``.

Each adapter maps stoker's batch (``input_ids``, ``labels`` already shifted, ``position_ids``
restarting at each document, ``cu_seqlens``, ``loss_mask``) to the framework's own names, and
stores the loader's one global state (``Loader.state_dict()``) where the framework keeps its
checkpoints, so a resume continues the same global order on any data-parallel size.
"""
