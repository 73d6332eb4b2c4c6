"""Which deployed stack the aws suite talks to: the stack's outputs when it is named (`--stack NAME`, read with
CloudFormation describe_stacks in AWS_REGION or the profile's region), else the environment variables the suite
has always read. The API key of a scratch workspace always comes from NOTEWELL_AWS_API_KEY (make one with
`notewell keys create --stack NAME`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from notewell.adapters.aws_stack import SEARCH_OUTPUT, URL_OUTPUT, find_stack, resolve_region

if TYPE_CHECKING:
    from collections.abc import Mapping

# stack output -> the environment variable that stands in for it
FALLBACKS = {URL_OUTPUT: "NOTEWELL_AWS_MCP_URL", SEARCH_OUTPUT: "NOTEWELL_SEARCH_ENDPOINT"}


@dataclass(frozen=True, slots=True)
class Deployment:
    mcp_url: str
    search_endpoint: str
    region: str
    api_key: str


def deployment_of(stack: str | None, environ: Mapping[str, str]) -> Deployment:
    """The deployment to test. A value neither the stack nor the environment gives raises RuntimeError, naming
    where to put it."""
    region = resolve_region(None, environ) if stack else environ.get("AWS_REGION", "")
    outputs = find_stack(stack, region).outputs if stack else {}

    def value(variable: str, output: str | None = None) -> str:
        found = (outputs.get(output) if output else None) or environ.get(variable)
        if not found:
            where = f"the {output} output of stack {stack!r}, or " if stack and output else ""
            raise RuntimeError(f"The aws suite runs against a deployed stack: it needs {where}{variable}.")
        return found

    return Deployment(
        mcp_url=value(FALLBACKS[URL_OUTPUT], URL_OUTPUT),
        search_endpoint=value(FALLBACKS[SEARCH_OUTPUT], SEARCH_OUTPUT),
        region=region or value("AWS_REGION"),
        api_key=value("NOTEWELL_AWS_API_KEY"),
    )
