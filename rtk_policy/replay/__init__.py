"""Shadow evaluation (`rtk-policy replay`): past commands re-decided under candidate policies."""
