"""What every section shares: how a field names its environment variable, the one error a bad
value raises, and the project's own folder (the default home of everything it writes)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

#: The project's own folder (where `make dev` runs the worker and the web app): the default home of
#: the library, the index and the web app's state, so the CLI run from any other folder reads the
#: same library instead of creating an empty `.data/` where it stands. Its `.env` is read from
#: anywhere too; one in the working directory overrides it.
HOME = Path(__file__).resolve().parents[1]
DATA_DIR = HOME / ".data"


class ConfigError(ValueError):
    """A setting that does not validate: one line naming the variable, for the person starting us."""


class Section(BaseModel):
    """One group of settings. Each field is read by its alias, the environment variable's name in
    lower case (`llm_model` for LLM_MODEL): the variables keep the flat names the README, the
    Kubernetes ConfigMap and every `.env` already use, while the code reads `settings.llm.model`.
    Numbers are finite: `inf` as a timeout would wait forever, `nan` compares false with every
    limit."""

    model_config = ConfigDict(extra="ignore", allow_inf_nan=False, frozen=True)
