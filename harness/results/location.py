"""Where the embedded results store lives: the rule is the worker's own (``worker.location``),
so ``bench`` and ``worker dev`` find the same file from any directory."""

from worker.location import (StoreLocation, default_db_path, default_spool_dir, default_store,
                             project_root, store_help, user_data_dir)

__all__ = ["StoreLocation", "default_db_path", "default_spool_dir", "default_store", "project_root",
           "store_help", "user_data_dir"]
