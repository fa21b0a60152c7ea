"""The JSON API's bodies and answers as marshmallow schemas, one module per area.

Views load bodies and dump answers through these classes, and the OpenAPI description
(webapp/api/openapi.py) is generated from the same classes, so the two cannot drift apart:
a key an answer gains without its schema never reaches a client. Keys are camelCase, as the
clients read them; an answer field named differently on the model says so with ``attribute``.
"""
