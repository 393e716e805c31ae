"""SFT rows, the training data both methods write (SCVD and FTD samples, SecureVibe's Suite
recipes, the lab) and ``train/`` reads: the row type, its tokenisation and loss masks
(``rows``), and its Parquet / HF datasets / verl files (``io``). A low room, so that the method
rooms never import the trainer room."""
