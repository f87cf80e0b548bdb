"""The kernel every capability shares and none owns: settings, registry, errors, HTTP, XML/JSON input,
archives, digests, SQL, version and search clients. Imports no capability."""
