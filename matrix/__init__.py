"""nopfn matrix: build, boot and test the patched kernel per architecture."""
