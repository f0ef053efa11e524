/**
 * The shapes AWS gives the names a remote knowledge base is made of: its region, Bedrock
 * knowledge base id, S3 vector bucket and index, and the IAM role we assume for it. Checked
 * when a knowledge base is created, so that a typo is refused there, naming the field and the
 * shape expected, rather than by AWS (or our own client) at every query afterwards; the code that
 * calls AWS checks the role ARN with the same pattern.
 *
 * The external id an organization gives with a role is checked the same way.
 *
 *     const problem = awsRegionProblem("us-east-1");   // null: fine
 *     awsRegionProblem("US East");                      // "must be an AWS region such as us-east-1 ..."
 */

/** Partition prefixes and the region's area, direction and number: us-east-1, us-gov-west-1, cn-north-1, us-iso-east-1, us-isob-east-1. */
export const AWS_REGION_NAME = /^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d{1,2}$/;
/** IAM role ARNs in the commercial, China and GovCloud partitions; a role path and name of IAM's characters. */
export const IAM_ROLE_ARN = /^arn:aws(-cn|-us-gov)?:iam::\d{12}:role\/[\w+=,.@/-]{1,512}$/;
/** STS's ExternalId: 2 to 1224 characters of letters, digits, `_` and +=,.@:/- (AWS's pattern). */
export const STS_EXTERNAL_ID = /^[\w+=,.@:/-]{2,1224}$/;
/** Bedrock knowledge base ids are ten capital letters and digits (e.g. ABCDEFGHIJ). */
export const BEDROCK_KNOWLEDGE_BASE_ID = /^[0-9a-zA-Z]{10}$/;
/** S3 Vectors index names: 3 to 63 lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit. */
const S3_VECTORS_INDEX = /^[a-z0-9](?:[a-z0-9.-]{1,61})[a-z0-9]$/;
/**
 * S3 vector bucket names: 3 to 63 lowercase letters, digits and hyphens, starting and ending
 * with a letter or digit. Stricter than general purpose buckets (no dots), so never an IP address.
 */
export const S3_VECTOR_BUCKET = /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/;

/** Why `value` is not an AWS region, or null when it is one. */
export function awsRegionProblem(value: string): string | null {
  return AWS_REGION_NAME.test(value) ? null : `must be an AWS region such as us-east-1 or eu-central-1 (lowercase, area-direction-number), got ${shown(value)}`;
}

/** Why `value` is not an IAM role ARN, or null when it is one. */
export function iamRoleArnProblem(value: string): string | null {
  return IAM_ROLE_ARN.test(value) ? null : `must be an IAM role ARN, arn:aws:iam::<12-digit account id>:role/<role name> (or arn:aws-cn / arn:aws-us-gov), got ${shown(value)}`;
}

/** Why `value` is not an external id STS accepts, or null when it is one. */
export function externalIdProblem(value: string): string | null {
  return STS_EXTERNAL_ID.test(value) ? null : `must be an AWS external id: 2 to 1224 characters of letters, digits and _+=,.@:/- (got ${value.length} characters${value.length >= 2 && value.length <= 1224 ? " with one outside that set" : ""})`;
}

/** Why `value` is not a Bedrock knowledge base id, or null when it is one. */
export function bedrockKnowledgeBaseIdProblem(value: string): string | null {
  return BEDROCK_KNOWLEDGE_BASE_ID.test(value) ? null : `must be a Bedrock knowledge base id: 10 letters and digits, as the Bedrock console shows it (e.g. ABCDE12345), got ${shown(value)}`;
}

/** Why `value` is not an S3 vector bucket name, or null when it is one. */
export function s3VectorBucketProblem(value: string): string | null {
  return S3_VECTOR_BUCKET.test(value) ? null : `must be an S3 vector bucket name: 3 to 63 lowercase letters, digits and hyphens, starting and ending with a letter or digit, got ${shown(value)}`;
}

/** Why `value` is not an S3 Vectors index name, or null when it is one. */
export function s3VectorsIndexProblem(value: string): string | null {
  return S3_VECTORS_INDEX.test(value) ? null : `must be an S3 Vectors index name: 3 to 63 lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit, got ${shown(value)}`;
}

function shown(value: string): string {
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 77)}...` : value);
}
