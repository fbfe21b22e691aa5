"""The one format of claim tables."""

from replication.claims import CLAIM_COLUMNS, Claim, write_claims


def test_claims_table_text(tmp_path):
    claims = [
        Claim("P", "1", "Fig. 1", "s", 0.5, "> 0", True, "r", spec="P-1"),
        Claim("P", "2", "Fig. 2", "t", 2.0, "< 1", False, "q", spec="P-2"),
    ]
    frame = write_claims(claims, tmp_path / "c.csv")
    assert list(frame.columns) == CLAIM_COLUMNS and frame.holds.dtype == bool
    assert (tmp_path / "c.csv").read_text() == (
        "paper,claim_id,spec,figure,statement,measured,threshold,holds,reason,kind,rule,n_runs,holds_fraction,ci_low,"
        "ci_high\n"
        "P,1,P-1,Fig. 1,s,0.5,> 0,True,r,checked,single measurement,1,1,,\n"
        "P,2,P-2,Fig. 2,t,2,< 1,False,q,checked,single measurement,1,0,,\n"
    )


def test_no_claims_still_has_the_header(tmp_path):
    frame = write_claims([], tmp_path / "empty.csv")
    assert list(frame.columns) == CLAIM_COLUMNS and len(frame) == 0
    assert (tmp_path / "empty.csv").read_text() == ",".join(CLAIM_COLUMNS) + "\n"
