"""Notification activities: which channels are configured, and one delivery to one of them.

Every channel is one row of CHANNELS, one module each (a new channel: its module with a `Channel`,
its row here; the recipe is in docs/architecture.md):

- `webhook.CONFIGURED` (`webhook:N`, the N-th URL of RESEARCH_WEBHOOKS) and `webhook.OWN`
  (`notify:N`, the research's own N-th `notify` URL): signed JSON POSTs (webhook.py);
- `mail.CHANNEL` (`email`, when SMTP_HOST and NOTIFY_EMAIL_TO are set): SMTP (mail.py).

`notification_targets` (a local activity of the research) lists opaque keys: no address and no
secret leaves the worker. `deliver_notification` (retried for a day by `NotifyWorkflow`) delivers
to one; what is sent is built by message.py, the same bytes on every attempt, with
`X-Research-Delivery` the same too: a receiver drops what it has seen.
"""

from __future__ import annotations

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.notify import mail, webhook
from activities.notify.mail import send_email
from activities.notify.message import body
from activities.notify.receivers import signature
from activities.notify.webhook import post_webhook
from settings import settings
from workflows import roles
from workflows.standing_messages import DeliverInput, DeliverOutput, Notice

__all__ = ["body", "post_webhook", "send_email", "signature"]

#: The channels, in the order their targets are listed.
CHANNELS = (webhook.CONFIGURED, webhook.OWN, mail.CHANNEL)
_BY_KIND = {channel.kind: channel for channel in CHANNELS}


@activity.defn(name=roles.NOTIFICATION_TARGETS.name)
async def notification_targets(notice: Notice) -> list[str]:
    cfg = settings()
    return [target for channel in CHANNELS for target in channel.targets(cfg, notice)]


@activity.defn(name=roles.DELIVER_NOTIFICATION.name)
async def deliver_notification(inp: DeliverInput) -> DeliverOutput:
    channel = _BY_KIND.get(inp.target.partition(":")[0])
    if channel is None:
        raise ApplicationError(
            f"notification target {inp.target} is no longer configured", type="NotConfigured"
        )
    return DeliverOutput(target=inp.target, detail=await channel.deliver(settings(), inp))
