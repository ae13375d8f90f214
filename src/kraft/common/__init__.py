"""Types, errors and configuration shared by every layer; depends on nothing else in kraft."""
