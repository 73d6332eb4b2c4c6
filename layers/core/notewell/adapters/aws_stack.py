"""A deployed stack, found by name: its outputs (CloudFormation) and its cursor secret (Secrets Manager).

The CLI works against a stack the way the functions do, from the same values: the table, the secret that seals
change-feed cursors, the search endpoint and the MCP URL. Every failure becomes a ConfigError that says what to do.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from notewell.config import ConfigError

if TYPE_CHECKING:
    from collections.abc import Mapping

# The outputs the CLI needs from template.yaml, by name.
TABLE_OUTPUT = "TableName"
SECRET_OUTPUT = "CursorSecretArn"
URL_OUTPUT = "McpUrl"
SEARCH_OUTPUT = "SearchEndpoint"


@dataclass(frozen=True, slots=True)
class DeployedStack:
    name: str
    region: str
    outputs: Mapping[str, str]

    @property
    def mcp_url(self) -> str:
        return self.output(URL_OUTPUT)

    def output(self, key: str) -> str:
        value = self.outputs.get(key)
        if not value:
            raise ConfigError(
                f"Stack {self.name!r} has no {key} output; was it deployed from this version's template.yaml? "
                "Run sam build && sam deploy, then try again."
            )
        return value


def resolve_region(explicit: str | None, environ: Mapping[str, str]) -> str:
    """--region, else AWS_REGION / AWS_DEFAULT_REGION, else the AWS profile's region."""
    region = explicit or environ.get("AWS_REGION") or environ.get("AWS_DEFAULT_REGION")
    if not region:
        import boto3
        from botocore.exceptions import ProfileNotFound

        profile = environ.get("AWS_PROFILE") or None
        try:
            region = boto3.session.Session(profile_name=profile).region_name
        except ProfileNotFound:
            raise ConfigError(
                f"The config profile ({profile}) could not be found; set AWS_PROFILE to a profile of your AWS "
                "config, or pass --region."
            ) from None
    if not region:
        raise ConfigError(
            "No AWS region: pass --region (the stack's region, e.g. --region eu-west-1) or set AWS_REGION."
        )
    return region


def _client(service: str, region: str) -> Any:
    import boto3

    return boto3.client(service, region_name=region)


def _explain(exc: Exception, what: str) -> ConfigError:
    from botocore.exceptions import ClientError, NoCredentialsError, PartialCredentialsError

    if isinstance(exc, NoCredentialsError | PartialCredentialsError):
        return ConfigError(
            f"No AWS credentials to {what}: sign in (aws sso login, or set AWS_PROFILE / AWS_ACCESS_KEY_ID), "
            "then try again."
        )
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        code, message = error.get("Code", ""), " ".join(str(error.get("Message", "")).split())
        if code in ("AccessDenied", "AccessDeniedException", "UnrecognizedClientException"):
            return ConfigError(f"AWS refused to {what} ({code}): the credentials in use need that permission.")
        return ConfigError(f"Could not {what}: {code} {message}".strip())
    return ConfigError(f"Could not {what}: {type(exc).__name__}: {' '.join(str(exc).split())}")


_NOT_SERVING = {
    "CREATE_IN_PROGRESS": "wait until it is deployed, then try again.",
    "CREATE_FAILED": "read its events (aws cloudformation describe-stack-events), delete it and deploy again.",
    "ROLLBACK_IN_PROGRESS": "its creation failed; read its events, delete it and deploy again.",
    "ROLLBACK_COMPLETE": "its creation failed; read its events, delete it and deploy again.",
    "DELETE_IN_PROGRESS": "it is being deleted.",
    "DELETE_FAILED": "its deletion failed; finish deleting it, or deploy a new stack.",
}


def find_stack(name: str, region: str) -> DeployedStack:
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        answer = _client("cloudformation", region).describe_stacks(StackName=name)
    except ClientError as exc:
        message = str(exc.response.get("Error", {}).get("Message", ""))
        if "does not exist" in message:
            raise ConfigError(
                f"Stack {name!r} does not exist in {region}; check the name (aws cloudformation list-stacks) "
                "or pass the stack's --region."
            ) from None
        raise _explain(exc, f"read stack {name!r}") from None
    except BotoCoreError as exc:
        raise _explain(exc, f"read stack {name!r}") from None
    (stack,) = answer["Stacks"]
    status = str(stack.get("StackStatus", ""))
    if status in _NOT_SERVING:
        raise ConfigError(f"Stack {name!r} is {status}: {_NOT_SERVING[status]}")
    outputs = {str(o["OutputKey"]): str(o.get("OutputValue", "")) for o in stack.get("Outputs", [])}
    return DeployedStack(name, region, outputs)


def cursor_secret(stack: DeployedStack) -> str:
    """The SecretString of the stack's CursorSecret (what the functions get as NOTEWELL_CURSOR_SECRET)."""
    from botocore.exceptions import BotoCoreError, ClientError

    arn = stack.output(SECRET_OUTPUT)
    try:
        value = _client("secretsmanager", stack.region).get_secret_value(SecretId=arn).get("SecretString")
    except (ClientError, BotoCoreError) as exc:
        raise _explain(exc, f"read the stack's cursor secret {arn}") from None
    if not value:
        raise ConfigError(f"The stack's cursor secret {arn} holds no SecretString; redeploy the stack.")
    return str(value)


def stack_environment(stack: DeployedStack) -> dict[str, str]:
    """The environment the stack's functions run with, as far as the CLI's store needs it: backend, table, cursor
    secret and region, read from the stack."""
    return {
        "NOTEWELL_BACKEND": "dynamodb",
        "NOTEWELL_TABLE": stack.output(TABLE_OUTPUT),
        "NOTEWELL_CURSOR_SECRET": cursor_secret(stack),
        "AWS_REGION": stack.region,
    }
