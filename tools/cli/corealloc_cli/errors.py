"""The one exception the commands raise for a user-facing error."""


class ToolError(Exception):
    """A problem the user can fix; printed without a traceback."""

    def __init__(self, message, exit_code=2):
        super().__init__(message)
        self.exit_code = exit_code
