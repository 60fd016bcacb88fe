"""Messages of the spec's ``a2a.proto`` (generated: see ``_generate``)."""
