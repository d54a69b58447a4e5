"""What the model is given of an MCP tool's result: text, never base64, never past a size.

A server may answer with megabytes (a log dump, a whole table) or with images and audio as
base64 text. The model is given the text and structured content as they are up to
``max_bytes`` of UTF-8, then a note saying how much was left out and the digest of the whole
(so the audit's execution record names what the server really sent without keeping it);
binary content (images, audio, resource blobs) is described by its type and size instead.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the MCP SDK is imported by a server's connection, not by this module
    import mcp.types as mcp_types

DEFAULT_MAX_BYTES = 100_000
"""``TOOL_OUTPUT_MAX_BYTES``'s default: about 25,000 tokens of text."""


def describe_binary(kind: str, mime_type: str | None, data: str) -> str:
    """``[image: image/png, 12,345 bytes, not shown]`` for a base64 payload."""
    return f"[{kind}: {mime_type or 'unknown type'}, {_decoded_size(data):,} bytes, not shown]"


def content_for_model(block: mcp_types.ContentBlock) -> Any:
    """One content block as the model may see it: text as is, binary described."""
    import mcp.types as mcp_types

    if isinstance(block, mcp_types.TextContent):
        return block.text
    if isinstance(block, mcp_types.ImageContent):
        return describe_binary("image", block.mime_type, block.data)
    if isinstance(block, mcp_types.AudioContent):
        return describe_binary("audio", block.mime_type, block.data)
    if isinstance(block, mcp_types.EmbeddedResource):
        resource = block.resource
        if isinstance(resource, mcp_types.BlobResourceContents):
            return {
                "resource": str(resource.uri),
                "content": describe_binary("blob", resource.mime_type, resource.blob),
            }
        return {"resource": str(resource.uri), "text": resource.text}
    return block.model_dump(mode="json", by_alias=True, exclude_none=True)


def capped(result: Any, max_bytes: int) -> Any:
    """``result`` itself when its JSON (or text) fits ``max_bytes``; else the first
    ``max_bytes`` of it as text, followed by a note with the whole size and digest."""
    text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
    encoded = text.encode("utf-8")
    if len(encoded) <= max_bytes:
        return result
    kept = encoded[:max_bytes].decode("utf-8", errors="ignore")
    left_out = len(encoded) - len(kept.encode("utf-8"))
    digest = hashlib.sha256(encoded).hexdigest()
    return (
        f"{kept}\n[countersign: the result was cut here: {left_out:,} of {len(encoded):,} bytes "
        f"left out (TOOL_OUTPUT_MAX_BYTES={max_bytes:,}); sha256 of the whole result: {digest}]"
    )


def _decoded_size(data: str) -> int:
    """The size of base64 ``data`` once decoded, without decoding it."""
    length = len(data.rstrip())
    return max(0, length * 3 // 4 - data.rstrip().count("=", max(0, length - 2)))
