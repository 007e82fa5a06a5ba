"""repmode's tools, built on the library: the ``repmode`` command (cli), ``repmode audit``,
``trace``/``diff``/``replay``, ``crosscheck``, the generated ops table and the pytest plugin."""
