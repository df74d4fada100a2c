"""
The metadata change proposals of bench:ingest, written as DataHub's file sink writes them (a JSON array,
each proposal as the SDK's MetadataChangeProposalWrapper serialises it, indented by 4), for the file
source of `datahub ingest` to read. Run in a DataHub client virtualenv:

    python test/bench/ingestProposals.py <out.json> <proposals> [<seed>]

Datasets of a few warehouse platforms, each with the aspects a database source emits for a table, in
that order: datasetProperties (description and custom properties), schemaMetadata (8-24 fields, some
tagged), status, subTypes, browsePathsV2, ownership (1-3 owners), globalTags, and upstreamLineage for
every third dataset (upstreams among the datasets before it). The last dataset may get fewer aspects, so
that the file holds exactly <proposals>. Prints the number of datasets and proposals.
"""

import json
import random
import sys

from datahub.emitter.mcp import MetadataChangeProposalWrapper
from datahub.metadata.schema_classes import (
    AuditStampClass,
    BrowsePathEntryClass,
    BrowsePathsV2Class,
    DatasetLineageTypeClass,
    DatasetPropertiesClass,
    GlobalTagsClass,
    OtherSchemaClass,
    OwnerClass,
    OwnershipClass,
    OwnershipTypeClass,
    SchemaFieldClass,
    SchemaFieldDataTypeClass,
    SchemaMetadataClass,
    StatusClass,
    StringTypeClass,
    NumberTypeClass,
    DateTypeClass,
    BooleanTypeClass,
    SubTypesClass,
    TagAssociationClass,
    UpstreamClass,
    UpstreamLineageClass,
)

PLATFORMS = ["snowflake", "postgres", "bigquery", "mysql"]
TYPES = [
    (StringTypeClass, "VARCHAR(256)"),
    (NumberTypeClass, "NUMBER(38,0)"),
    (DateTypeClass, "TIMESTAMP_NTZ"),
    (BooleanTypeClass, "BOOLEAN"),
]
WORDS = "customer order invoice payment account event session product region channel campaign ledger".split()
TAGS = ["urn:li:tag:pii", "urn:li:tag:gold", "urn:li:tag:deprecated", "urn:li:tag:finance", "urn:li:tag:raw"]


def dataset_urn(i):
    platform = PLATFORMS[i % len(PLATFORMS)]
    return platform, f"urn:li:dataset:(urn:li:dataPlatform:{platform},analytics_db.schema_{i % 50}.table_{i},PROD)"


def aspects(i, rng):
    platform, urn = dataset_urn(i)
    stamp = AuditStampClass(time=1_700_000_000_000 + i, actor="urn:li:corpuser:ingestion")
    schema_name = f"schema_{i % 50}"
    yield DatasetPropertiesClass(
        name=f"table_{i}",
        qualifiedName=f"analytics_db.{schema_name}.table_{i}",
        description=f"Table {i}: {' '.join(rng.choice(WORDS) for _ in range(rng.randint(12, 40)))}.",
        customProperties={"table_type": "BASE TABLE", "row_count": str(rng.randint(0, 10**7)), "owner_team": f"team-{i % 17}"},
    )
    fields = []
    for f in range(rng.randint(8, 24)):
        cls, native = TYPES[f % len(TYPES)]
        fields.append(
            SchemaFieldClass(
                fieldPath=f"{rng.choice(WORDS)}_{f}",
                type=SchemaFieldDataTypeClass(type=cls()),
                nativeDataType=native,
                description=f"column {f} of table {i}" if f % 3 == 0 else None,
                nullable=f % 2 == 0,
                globalTags=GlobalTagsClass(tags=[TagAssociationClass(tag=TAGS[0])]) if f % 7 == 3 else None,
            )
        )
    yield SchemaMetadataClass(
        schemaName=f"{schema_name}.table_{i}",
        platform=f"urn:li:dataPlatform:{platform}",
        version=0,
        hash="",
        platformSchema=OtherSchemaClass(rawSchema=""),
        fields=fields,
        created=stamp,
        lastModified=stamp,
    )
    yield StatusClass(removed=False)
    yield SubTypesClass(typeNames=["Table" if i % 5 else "View"])
    yield BrowsePathsV2Class(path=[BrowsePathEntryClass(id="analytics_db"), BrowsePathEntryClass(id=schema_name)])
    yield OwnershipClass(
        owners=[
            OwnerClass(owner=f"urn:li:corpuser:user_{rng.randint(0, 500)}", type=OwnershipTypeClass.TECHNICAL_OWNER)
            for _ in range(rng.randint(1, 3))
        ],
        lastModified=stamp,
    )
    yield GlobalTagsClass(tags=[TagAssociationClass(tag=t) for t in rng.sample(TAGS, rng.randint(1, 3))])
    if i % 3 == 2:
        yield UpstreamLineageClass(
            upstreams=[
                UpstreamClass(dataset=dataset_urn(j)[1], type=DatasetLineageTypeClass.TRANSFORMED, auditStamp=stamp)
                for j in sorted({rng.randrange(i) for _ in range(rng.randint(1, 3))})
            ]
        )


def main():
    out, total = sys.argv[1], int(sys.argv[2])
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 50)
    written = datasets = 0
    with open(out, "w") as f:
        f.write("[\n")
        while written < total:
            urn = dataset_urn(datasets)[1]
            for aspect in aspects(datasets, rng):
                if written == total:
                    break
                mcp = MetadataChangeProposalWrapper(entityUrn=urn, aspect=aspect)
                if written:
                    f.write(",\n")
                json.dump(mcp.to_obj(simplified_structure=True), f, indent=4)
                written += 1
            datasets += 1
        f.write("\n]")
    print(json.dumps({"datasets": datasets, "proposals": written}))


if __name__ == "__main__":
    main()
